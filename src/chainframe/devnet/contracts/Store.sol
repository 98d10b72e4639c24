// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @title Store
/// @notice Plain storage writes at known slots, for eth_getProof storage
///         proofs and prestateTracer (diffMode) storage diffs.
///         Layout: slot 0 = `slots` mapping root (entries live at
///         keccak256(abi.encode(key, 0))), slot 1 = `counter`.
contract Store {
    mapping(uint256 => uint256) public slots;
    uint256 public counter;

    event Set(uint256 indexed key, uint256 value);
    event Bumped(uint256 counter);

    function set(uint256 key, uint256 value) external {
        slots[key] = value;
        emit Set(key, value);
    }

    function bump() external returns (uint256) {
        counter += 1;
        emit Bumped(counter);
        return counter;
    }
}
