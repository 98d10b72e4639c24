"""A small chain of its own for the ABI-folder and proxy tests: an EIP-1967 proxy in front of the devnet's ``Store``,
upgraded mid-range to the devnet's ``Emitter``, with calls on each side (some of the other side's functions, which
revert there), all encoded with eth-abi.

The proxy is assembled here by hand (no solc on these machines): its runtime delegates every call to the address in
EIP-1967's implementation slot, except ``upgradeTo(address)``, which writes the slot and logs
``Upgraded(address indexed implementation)`` as EIP-1967 says (no admin check: a test contract).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from eth_abi import encode as abi_encode  # type: ignore[attr-defined]

from chainframe.decode import BEACON_SLOT, IMPLEMENTATION_SLOT, PROXIABLE_SLOT, keccak256
from chainframe.devnet import DEV_ACCOUNTS, AnvilNode
from chainframe.devnet._contracts import artifacts

CHAIN_ID = 1967
"""Not the devnet's 31337: the same deployer and nonces give the same addresses, and the fixtures of both chains
live in one folder (tests/data/abi)."""
UPGRADED = keccak256(b"Upgraded(address)")
UPGRADE_TO = keccak256(b"upgradeTo(address)")[:4]
MAX = 2**256 - 1
EMPTY = 60
"""Empty blocks mined before the upgrade."""


def _assemble(ops: list[Any]) -> bytes:
    """Bytes and labels: ``("at", name)`` marks a JUMPDEST, ``("to", name)`` pushes its offset (PUSH1)."""
    where, offset = {}, 0
    for op in ops:
        if isinstance(op, tuple) and op[0] == "at":
            where[op[1]] = offset
            offset += 1
        else:
            offset += 2 if isinstance(op, tuple) else len(op)
    out = b""
    for op in ops:
        if isinstance(op, tuple):
            out += b"\x5b" if op[0] == "at" else bytes([0x60, where[op[1]]])
        else:
            out += op
    return out


def _push32(word: bytes) -> bytes:
    return b"\x7f" + word


SLOT = bytes.fromhex(IMPLEMENTATION_SLOT[2:])
BEACON = bytes.fromhex(BEACON_SLOT[2:])
PROXIABLE = bytes.fromhex(PROXIABLE_SLOT[2:])


def runtime(slot: bytes = SLOT) -> bytes:
    """A proxy's runtime: every call delegated to the address in ``slot``, but ``upgradeTo``."""
    return _assemble([
        bytes.fromhex("600035" "60e01c" "63") + UPGRADE_TO + b"\x14", ("to", "upgrade"), b"\x57",  # upgradeTo?
        bytes.fromhex("36" "6000" "6000" "37"),  # calldatacopy(0, 0, calldatasize)
        bytes.fromhex("6000" "6000" "36" "6000"), _push32(slot), bytes.fromhex("54" "5a" "f4"),  # delegatecall
        bytes.fromhex("3d" "6000" "6000" "3e"), ("to", "ok"), b"\x57",  # returndatacopy; jump if it succeeded
        bytes.fromhex("3d" "6000" "fd"),  # revert(0, returndatasize)
        ("at", "ok"), bytes.fromhex("3d" "6000" "f3"),  # return(0, returndatasize)
        ("at", "upgrade"), bytes.fromhex("6004" "35" "80"), _push32(slot), b"\x55",  # sstore(slot, calldataload(4))
        _push32(UPGRADED), bytes.fromhex("6000" "6000" "a2" "00"),  # log2(0, 0, Upgraded, implementation); stop
    ])  # fmt: skip


def proxy_creation(implementation: str, slot: bytes = SLOT) -> bytes:
    """Creation code: the constructor writes its argument (the implementation, or a beacon) into ``slot`` and
    returns the runtime."""
    code = runtime(slot)

    def head(offset: int) -> bytes:  # copies the last word (the argument) to the slot, then the runtime out
        return (
            bytes.fromhex("602060203803600039600051")
            + _push32(slot)
            + b"\x55"
            + bytes([0x60, len(code), 0x80, 0x60, offset])
            + bytes.fromhex("6000396000f3")
        )

    init = head(0)
    return head(len(init)) + code + abi_encode(["address"], [implementation])


def beacon_creation(implementation: str) -> bytes:
    """A beacon whose every call (``implementation()`` among them) answers ``implementation`` as one word."""
    code = _push32(abi_encode(["address"], [implementation])) + bytes.fromhex("60005260206000f3")
    return bytes([0x60, len(code), 0x80, 0x60, 11, 0x60, 0, 0x39, 0x60, 0, 0xF3]) + code  # 11: this head's length


@dataclass
class ProxyChain:
    url: str
    store: str
    emitter: str
    proxy: str
    upgrade_block: int
    last: int
    beacon: str = ""
    beacon_proxy: str = ""
    """A proxy whose EIP-1967 beacon slot names ``beacon``, which answers ``emitter``."""
    uups_proxy: str = ""
    """A proxy in front of ``store`` through EIP-1822's PROXIABLE slot."""
    sent: list[dict[str, Any]] = field(default_factory=list)
    """Each call to a proxy: to, block, transaction hash, signature, arguments, status (1: it ran, 0: reverted)."""


def _send(node: AnvilNode, data: bytes, to: str | None = None) -> dict[str, Any]:
    tx = {"from": DEV_ACCOUNTS[0], "data": "0x" + data.hex(), "gas": hex(1_000_000)}
    if to is not None:
        tx["to"] = to
    tx_hash = node.rpc.call("eth_sendTransaction", tx)
    for _ in range(200):  # mined at once, but under load the receipt may lag the answer
        receipt: dict[str, Any] | None = node.rpc.call("eth_getTransactionReceipt", tx_hash)
        if receipt is not None:
            return receipt
        time.sleep(0.05)
    raise AssertionError(f"transaction {tx_hash} was not mined")


def build(node: AnvilNode) -> ProxyChain:
    """Deploy and call, one transaction a block (anvil mines each at once)."""
    made = artifacts()
    store = _send(node, bytes.fromhex(made["Store"].bytecode[2:]))["contractAddress"]
    emitter = _send(node, bytes.fromhex(made["Emitter"].bytecode[2:]))["contractAddress"]
    proxy = _send(node, proxy_creation(store))["contractAddress"]
    chain = ProxyChain(node.url, store.lower(), emitter.lower(), proxy.lower(), 0, 0)

    def call(signature: str, types: list[str], args: list[Any], to: str = proxy) -> None:
        data = keccak256(signature.encode())[:4] + abi_encode(types, args)
        receipt = _send(node, data, to)
        chain.sent.append({"to": to.lower(), "block": int(receipt["blockNumber"], 16), "args": args,
                           "hash": receipt["transactionHash"], "signature": signature,
                           "status": int(receipt["status"], 16)})  # fmt: skip

    call("set(uint256,uint256)", ["uint256", "uint256"], [1, 2])
    call("bump()", [], [])
    call("ping(uint256,bytes)", ["uint256", "bytes"], [7, b"early"])  # Emitter's, before the upgrade: reverts
    call("set(uint256,uint256)", ["uint256", "uint256"], [5, MAX])
    node.rpc.call("anvil_mine", hex(EMPTY))  # a stretch to search: the upgrade is found by bisection too
    upgrade = _send(node, UPGRADE_TO + abi_encode(["address"], [emitter]), proxy)
    chain.upgrade_block = int(upgrade["blockNumber"], 16)
    call("ping(uint256,bytes)", ["uint256", "bytes"], [9, b"hello"])
    call("set(uint256,uint256)", ["uint256", "uint256"], [3, 4])  # Store's, after the upgrade: reverts
    call("ping(uint256,bytes)", ["uint256", "bytes"], [MAX, bytes(40)])
    chain.beacon = _send(node, beacon_creation(emitter))["contractAddress"].lower()
    chain.beacon_proxy = _send(node, proxy_creation(chain.beacon, BEACON))["contractAddress"].lower()
    chain.uups_proxy = _send(node, proxy_creation(store, PROXIABLE))["contractAddress"].lower()
    call("set(uint256,uint256)", ["uint256", "uint256"], [11, 12], chain.uups_proxy)  # it delegates through the slot
    chain.last = int(node.rpc.call("eth_blockNumber"), 16)
    return chain


def abi_of(contract: str) -> list[dict[str, Any]]:
    """A devnet contract's ABI as compiled (artifacts.json), read independently of the folder under test."""
    from chainframe.devnet._contracts import artifacts_bytes

    abi: list[dict[str, Any]] = json.loads(artifacts_bytes())["contracts"][contract]["abi"]
    return abi
