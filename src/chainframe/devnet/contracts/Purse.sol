// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @title Doomed
/// @notice Created with value by Purse.scatter and self-destructed in its
///         own constructor: since Cancun (EIP-6780) a contract destroyed in
///         the transaction that created it is deleted, so it leaves no code.
contract Doomed {
    constructor(address payable heir) payable {
        selfdestruct(heir);
    }
}

/// @title Vault
/// @notice Created with value by Purse.open; Purse.close self-destructs it in
///         a later transaction, which since Cancun only sends its balance
///         out (the contract and its code stay).
contract Vault {
    // Plain storage, not `immutable`, so eth_getCode equals deployedBytecode.
    address public owner;

    constructor() payable {
        owner = msg.sender;
    }

    function close(address payable heir) external {
        require(msg.sender == owner, "Vault: not owner");
        selfdestruct(heir);
    }
}

/// @title Purse
/// @notice Ether movements for block traces: internal value transfers, a
///         reverted internal call inside a successful transaction, contracts
///         created with value by a contract, and self-destructs.
contract Purse {
    Vault public vault;

    event Scattered(address indexed to, uint256 amount);

    /// @notice Sends half of msg.value to `to` (an internal CALL with value),
    ///         calls `boom` with 1 wei (a CALL that reverts, so its value
    ///         never moves, in a transaction that succeeds), and creates a
    ///         Doomed with a quarter of msg.value that self-destructs to `to`.
    function scatter(address payable to) external payable {
        uint256 half = msg.value / 2;
        (bool sent, ) = to.call{value: half}("");
        require(sent, "Purse: send failed");
        (bool ok, ) = address(this).call{value: 1}(abi.encodeCall(this.boom, ()));
        require(!ok, "Purse: boom did not revert");
        new Doomed{value: msg.value / 4}(to);
        emit Scattered(to, half);
    }

    /// @notice Always reverts with Error("Purse: boom").
    function boom() external payable {
        revert("Purse: boom");
    }

    /// @notice CREATE with value from inside a call: a Vault holding msg.value.
    function open() external payable {
        vault = new Vault{value: msg.value}();
    }

    /// @notice SELFDESTRUCT of a contract created in an earlier transaction.
    function close(address payable heir) external {
        vault.close(heir);
    }
}
