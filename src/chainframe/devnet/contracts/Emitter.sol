// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @title Emitter
/// @notice Log generator for the devnet workload: many logs per transaction,
///         covering every topic count (LOG0..LOG4), plus one ordinary event
///         with variable-length (dynamic ABI) data.
contract Emitter {
    /// Event id used as topic0 for log1..log4. It is not declared as a
    /// Solidity event on purpose: raw logs are emitted from assembly, and
    /// decoders must cope with logs they have no ABI entry for.
    bytes32 public constant SPAM_TOPIC = keccak256("Spam(uint256)");

    event Ping(address indexed sender, uint256 indexed seq, bytes payload);

    /// @notice Emits exactly `n` logs. Log i has topic count i % 5, so any
    ///         five consecutive logs are LOG0, LOG1, LOG2, LOG3, LOG4.
    ///         Data is always one 32-byte word holding i; topics are derived
    ///         only from i, the caller and the block number, so the output
    ///         is fully deterministic for a given transaction.
    function emitMany(uint256 n) external {
        bytes32 t0 = SPAM_TOPIC;
        bytes32 sender = bytes32(uint256(uint160(msg.sender)));
        bytes32 blk = bytes32(block.number);
        for (uint256 i = 0; i < n; ++i) {
            uint256 kind = i % 5;
            assembly ("memory-safe") {
                // Scratch space (0x00..0x3f) is free for temporary use.
                mstore(0x00, i)
                switch kind
                case 0 { log0(0x00, 0x20) }
                case 1 { log1(0x00, 0x20, t0) }
                case 2 { log2(0x00, 0x20, t0, i) }
                case 3 { log3(0x00, 0x20, t0, i, sender) }
                default { log4(0x00, 0x20, t0, i, sender, blk) }
            }
        }
    }

    /// @notice One ABI event with dynamic `bytes` data, so decoders see
    ///         offset/length encoding and payloads of any size.
    function ping(uint256 seq, bytes calldata payload) external {
        emit Ping(msg.sender, seq, payload);
    }
}
