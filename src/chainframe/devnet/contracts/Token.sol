// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @title Token
/// @notice Minimal ERC-20 for the devnet workload. It exists so the workload
///         produces the most common real-world log shape (Transfer/Approval
///         with indexed addresses) and a predictable revert-with-reason.
contract Token {
    string public constant name = "Chainframe Token";
    string public constant symbol = "CFT";
    uint8 public constant decimals = 18;

    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    /// @param supply Entire supply, minted to the deployer so the workload
    ///        account can hand out tokens without a separate mint function.
    constructor(uint256 supply) {
        totalSupply = supply;
        balanceOf[msg.sender] = supply;
        // Mint is a Transfer from the zero address, as indexers expect.
        emit Transfer(address(0), msg.sender, supply);
    }

    function transfer(address to, uint256 value) external returns (bool) {
        _move(msg.sender, to, value);
        return true;
    }

    function approve(address spender, uint256 value) external returns (bool) {
        allowance[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
        return true;
    }

    function transferFrom(address from, address to, uint256 value) external returns (bool) {
        uint256 allowed = allowance[from][msg.sender];
        require(allowed >= value, "insufficient allowance");
        // type(uint256).max means "infinite approval", like most tokens.
        if (allowed != type(uint256).max) {
            allowance[from][msg.sender] = allowed - value;
        }
        _move(from, to, value);
        return true;
    }

    function _move(address from, address to, uint256 value) private {
        // Explicit reason string (not a checked-arithmetic panic) so the
        // workload has a deterministic Error(string) revert to decode.
        require(balanceOf[from] >= value, "insufficient balance");
        unchecked {
            balanceOf[from] -= value;
        }
        balanceOf[to] += value;
        emit Transfer(from, to, value);
    }
}
