// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// Only the selector is needed for the STATICCALL in Nest.staticPeek.
interface IBalanceOf {
    function balanceOf(address who) external view returns (uint256);
}

/// @title Child
/// @notice Deployed by Nest.spawn, so traces contain a CREATE made from
///         inside a call, followed by a CALL into the fresh contract.
contract Child {
    // Plain storage, not `immutable`: an immutable would be patched into the
    // runtime code at deploy time, so eth_getCode would no longer equal the
    // artifact's deployedBytecode.
    address public parent;
    uint256 public value;

    event Born(address indexed parent);
    event Poked(uint256 value);

    constructor() {
        parent = msg.sender;
        value = 1;
        emit Born(msg.sender);
    }

    function poke() external returns (uint256) {
        value += 1;
        emit Poked(value);
        return value;
    }
}

/// @title Nest
/// @notice Call-trace generator: nested CALLs, CREATE, STATICCALL,
///         DELEGATECALL and a revert with a reason, for callTracer /
///         trace_* tests of the devnet workload.
contract Nest {
    event Dived(uint256 indexed depth);

    /// @notice Recurses through external calls (`this.dive`), not internal
    ///         jumps, so each level is its own frame in a call trace.
    function dive(uint256 depth) external returns (uint256) {
        emit Dived(depth);
        if (depth == 0) {
            return 0;
        }
        return this.dive(depth - 1) + 1;
    }

    /// @notice CREATE inside a call, then a CALL into the new contract.
    function spawn() external returns (address) {
        Child child = new Child();
        child.poke();
        return address(child);
    }

    /// @notice STATICCALL (view call from a view function) into a Token.
    function staticPeek(address token, address who) external view returns (uint256) {
        return IBalanceOf(token).balanceOf(who);
    }

    /// @notice Always reverts with Error("Nest: fail"); `code` only makes
    ///         the calldata differ between calls.
    function fail(uint256 code) external pure {
        code;
        revert("Nest: fail");
    }

    /// @notice DELEGATECALL: runs `target`'s code against Nest's storage.
    ///         Bubbles up the callee's revert data unchanged.
    function delegate(address target, bytes calldata data) external returns (bytes memory) {
        (bool ok, bytes memory ret) = target.delegatecall(data);
        if (!ok) {
            assembly ("memory-safe") {
                revert(add(ret, 0x20), mload(ret))
            }
        }
        return ret;
    }
}
