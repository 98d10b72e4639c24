"""State diffs on the hard cases of a chain of their own, each row equal to what an independent reading says.

The chain (:data:`PLAN`, eight blocks on an anvil of this module's) holds what state diff tools get wrong: ether moved
inside calls and a call that reverted inside a successful transaction (``Purse.scatter``), a failed transaction
(it pays gas, moves no value), a contract that self-destructs in the transaction creating it (``Doomed``) and one
that does in a later one (``Vault``: since Cancun only its balance leaves), contracts created by contracts, slots
written and cleared (or put back) within one transaction, several transactions of one block touching the same
accounts and slot, and an address re-created with CREATE2 after it was destroyed: ether sent to it before it has code,
a CREATE2 whose constructor self-destructs to the sender (the ether it was sent goes out), ether sent again, a CREATE2
that self-destructs to itself (the ether is burnt), then a CREATE2 that stays, whose code self-destructs when called.

The independent reading: a twin anvil runs the same transactions, each in a block of its own, and its
``eth_getBalance``/``eth_getTransactionCount``/``eth_getCode``/``eth_getStorageAt`` at each of its blocks are the
state at each transaction boundary of the chain; a transaction's rows must be exactly the values that differ between
the boundaries before and after it (fees are legacy gas prices over a base fee of zero: the same in both chains).
Both routes (anvil's ``trace_replayBlockTransactions``, and through the gateway ``debug_traceBlockByNumber``'s
prestate diffs) give those rows, and ``verify`` proves them, and fails a changed, removed or moved row of them.
"""

from __future__ import annotations

import itertools
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from chainframe import ChainframeError, collect, extract
from chainframe._keccak import keccak256
from chainframe.devnet import DEV_ACCOUNTS, AnvilNode, AnvilOptions, GatewayConfig, GatewayProcess
from chainframe.devnet._contracts import calldata, deploy_data
from chainframe.engine import verify_stored
from tests.nodes.answers import batch

NAMES = ("balance_diffs", "nonce_diffs", "code_diffs", "storage_diffs")
GAS_PRICE = 10**9
A, B, C, H = DEV_ACCOUNTS[:4]

# --- a few EVM programs, assembled here (no compiler needed) ---

OPCODES = {"STOP": 0x00, "ADD": 0x01, "LT": 0x10, "ISZERO": 0x15, "AND": 0x16, "ADDRESS": 0x30, "ORIGIN": 0x32,
           "CALLVALUE": 0x34, "CALLDATALOAD": 0x35, "CALLDATASIZE": 0x36, "CALLDATACOPY": 0x37, "CODECOPY": 0x39,
           "MSTORE": 0x52, "SSTORE": 0x55, "JUMP": 0x56, "JUMPI": 0x57, "JUMPDEST": 0x5B, "PUSH0": 0x5F, "DUP1": 0x80,
           "DUP2": 0x81, "CREATE2": 0xF5, "RETURN": 0xF3, "REVERT": 0xFD, "SELFDESTRUCT": 0xFF}  # fmt: skip


def assemble(*program: str | int | bytes) -> bytes:
    """Opcodes by name, ints pushed (PUSH1..PUSH32), ``"@name"`` a label's offset pushed (PUSH1), ``":name"`` a
    JUMPDEST there, ``"=name"`` a label with no byte, and bytes appended as they are (a runtime after its
    constructor)."""
    labels: dict[str, int] = {}
    for _ in range(2):  # the first pass finds the labels' offsets (every push of a label is two bytes)
        code = bytearray()
        for item in program:
            if isinstance(item, bytes):
                code += item
            elif isinstance(item, int):
                size = max(1, (item.bit_length() + 7) // 8)
                code += bytes([0x5F + size]) + item.to_bytes(size, "big")
            elif item.startswith("@"):
                code += bytes([0x60, labels.get(item[1:], 0)])
            elif item.startswith(":"):
                labels[item[1:]] = len(code)
                code.append(OPCODES["JUMPDEST"])
            elif item.startswith("="):
                labels[item[1:]] = len(code)
            else:
                code.append(OPCODES[item])
    return bytes(code)


def deployer(runtime: bytes) -> bytes:
    """Creation code returning ``runtime``."""
    return assemble(len(runtime), "DUP1", 9, "PUSH0", "CODECOPY", "PUSH0", "RETURN") + runtime


SLOTS = assemble(
    "PUSH0", ":loop", "CALLDATASIZE", "DUP2", "LT", "ISZERO", "@end", "JUMPI",
    "DUP1", 32, "ADD", "CALLDATALOAD", "DUP2", "CALLDATALOAD", "SSTORE", 64, "ADD", "@loop", "JUMP",
    ":end", "STOP",
)  # fmt: skip
"""Writes its calldata's (slot, value) words in order: a slot written then cleared in one call, say."""
FACTORY = assemble(
    "CALLDATASIZE", "PUSH0", "PUSH0", "CALLDATACOPY", "PUSH0", "CALLDATASIZE", "PUSH0", "CALLVALUE", "CREATE2",
    "DUP1", "@made", "JUMPI", "PUSH0", "PUSH0", "REVERT", ":made", "PUSH0", "MSTORE", 32, "PUSH0", "RETURN",
)  # fmt: skip
"""CREATE2 (salt 0) of the calldata as creation code, with the call's value; reverts where it fails."""
LATER = assemble("ORIGIN", "SELFDESTRUCT")
"""A runtime that self-destructs to the sender when called (since Cancun: its balance goes, its code stays)."""
PHOENIX = assemble(
    "CALLVALUE", 1, "AND", "@die", "JUMPI",
    42, "PUSH0", "SSTORE", len(LATER), "DUP1", "@runtime", "PUSH0", "CODECOPY", "PUSH0", "RETURN",
    ":die", 1, "PUSH0", "SSTORE", "CALLVALUE", 2, "AND", "@burn", "JUMPI", "ORIGIN", "SELFDESTRUCT",
    ":burn", "ADDRESS", "SELFDESTRUCT", "=runtime", LATER,
)  # fmt: skip
"""One creation code, so one CREATE2 address, three fates by the value sent: odd, it writes slot 0 and self-destructs
in its constructor, to the sender (value & 2 == 0) or to itself (the ether burnt); even, it writes 42 at slot 0 and
stays, as :data:`LATER`."""


def words(*pairs: tuple[int, int]) -> str:
    return "0x" + "".join(format(v, "064x") for pair in pairs for v in pair)


def create_address(sender: str, nonce: int) -> str:
    """CREATE's address: keccak(rlp([sender, nonce]))[12:] (nonces below 128)."""
    raw = bytes.fromhex(sender[2:])
    body = bytes([0x80 + len(raw)]) + raw + (bytes([nonce]) if 0 < nonce < 0x80 else b"\x80")
    return "0x" + keccak256(bytes([0xC0 + len(body)]) + body)[12:].hex()


def create2_address(factory: str, code: bytes, salt: int = 0) -> str:
    raw = b"\xff" + bytes.fromhex(factory[2:]) + salt.to_bytes(32, "big") + keccak256(code)
    return "0x" + keccak256(raw)[12:].hex()


@dataclass(frozen=True)
class Tx:
    sender: str
    to: str | None
    data: str = "0x"
    value: int = 0


SLOTS_AT = create_address(A, 0)
FACTORY_AT = create_address(A, 1)
PURSE_AT = create_address(A, 2)
VAULT_AT = create_address(PURSE_AT, 1)
DOOMED_AT = create_address(PURSE_AT, 2)  # made by scatter, after the Vault (Purse.open) took nonce 1
PHOENIX_AT = create2_address(FACTORY_AT, PHOENIX)
PHOENIX_DATA = "0x" + PHOENIX.hex()

PLAN: tuple[tuple[Tx, ...], ...] = (
    (  # block 1: one sender's three creations in one block
        Tx(A, None, "0x" + deployer(SLOTS).hex()),
        Tx(A, None, "0x" + deployer(FACTORY).hex()),
        Tx(A, None, deploy_data("Purse")),
    ),
    (  # block 2: one slot written by two transactions, B sends and receives in one block
        Tx(B, SLOTS_AT, words((2, 7), (5, 1))),
        Tx(C, SLOTS_AT, words((2, 8))),
        Tx(A, B, value=10**18),
        Tx(B, C, value=3 * 10**17),
    ),
    (  # block 3: written and cleared (no change), changed and cleared, changed and put back, written again
        Tx(A, SLOTS_AT, words((1, 5), (1, 0))),
        Tx(B, SLOTS_AT, words((2, 9), (2, 0))),
        Tx(C, SLOTS_AT, words((5, 3), (5, 1))),
        Tx(A, SLOTS_AT, words((2, 4))),
    ),
    (  # block 4: a Vault made with value by a contract, ether moved inside calls, a revert inside a success, a
        # contract destroyed as it is made; a failed transaction
        Tx(B, PURSE_AT, calldata("Purse", "open()"), 5 * 10**17),
        Tx(A, PURSE_AT, calldata("Purse", "scatter(address)", H), 10**18),
        Tx(A, PURSE_AT, calldata("Purse", "boom()"), 12345),
    ),
    (  # block 5: the Vault self-destructs a transaction after it was made; ether to an address before its code
        Tx(B, PURSE_AT, calldata("Purse", "close(address)", H)),
        Tx(A, PHOENIX_AT, value=1000),
    ),
    (  # block 6: made and destroyed in one transaction, sending its 1000 + 1 wei to C; ether to it again
        Tx(C, FACTORY_AT, PHOENIX_DATA, 1),
        Tx(A, PHOENIX_AT, value=500),
    ),
    (  # block 7: made and destroyed to itself (500 + 3 wei burnt), then made to stay, then destroyed later (its 4 wei
        # to C, its code kept)
        Tx(B, FACTORY_AT, PHOENIX_DATA, 3),
        Tx(A, FACTORY_AT, PHOENIX_DATA, 4),
        Tx(C, PHOENIX_AT),
    ),
    (  # block 8: ether sent to the code that self-destructs: it comes straight back
        Tx(A, PHOENIX_AT, value=7),
    ),
)
HEAD = len(PLAN)
WATCHED = sorted({A, B, C, H, SLOTS_AT, FACTORY_AT, PURSE_AT, VAULT_AT, DOOMED_AT, PHOENIX_AT, "0x" + "00" * 20})
STORAGE = [(SLOTS_AT, s) for s in (1, 2, 5)] + [(PHOENIX_AT, 0), (PURSE_AT, 0), (VAULT_AT, 0)]


def _send(node: AnvilNode, tx: Tx) -> str:
    fields: dict[str, Any] = {"from": tx.sender, "data": tx.data, "value": hex(tx.value), "gas": hex(1_000_000),
                              "gasPrice": hex(GAS_PRICE)}  # fmt: skip
    if tx.to is not None:
        fields["to"] = tx.to
    return str(node.rpc.call("eth_sendTransaction", fields))


def _start() -> AnvilNode:
    node = AnvilNode(AnvilOptions())
    node.rpc.call("anvil_setNextBlockBaseFeePerGas", "0x0")  # stays zero: no block fills half its gas
    return node


@dataclass
class Chain:
    node: AnvilNode
    twin: AnvilNode
    gateway: GatewayProcess
    key: str
    transactions: list[tuple[int, int, str]]
    """Each transaction's (block, index, hash) on the chain, in order: the twin's block k holds the k-th."""

    @property
    def via_gateway(self) -> str:
        return self.gateway.http_url(self.key)


@pytest.fixture(scope="module")
def chain() -> Iterator[Chain]:
    """The plan on two anvils: as written (a block per group) and the twin (a block per transaction), and a gateway
    in front of the first (it serves the prestate route only)."""
    with _start() as node, _start() as twin:
        node.automine(False)
        placed = []
        for number, group in enumerate(PLAN, start=1):
            hashes = [_send(node, tx) for tx in group]
            node.mine(1_700_000_000 + number)
            mined = node.rpc.call("eth_getBlockByNumber", hex(number), False)["transactions"]
            assert mined == hashes, number  # one block per group, in the order sent
            placed += [(number, index, h) for index, h in enumerate(hashes)]
        for tx in itertools.chain.from_iterable(PLAN):
            _send(twin, tx)
        receipts = batch(node.url, [("eth_getTransactionReceipt", [h]) for *_, h in placed])
        twins = batch(twin.url, [("eth_getBlockReceipts", [hex(n)]) for n in range(1, len(placed) + 1)])
        for receipt, (other,) in zip(receipts, twins, strict=True):
            assert (receipt["status"], receipt["gasUsed"]) == (other["status"], other["gasUsed"])
        key = secrets.token_hex(8)
        config = GatewayConfig(networks={"devnet": node.url}, default_network="devnet", keys=(key,),
                               admin_token=secrets.token_hex(8))  # fmt: skip
        gateway = GatewayProcess(config)
        try:
            yield Chain(node, twin, gateway, key, placed)
        finally:
            gateway.stop()


def test_the_plan_does_what_it_says(chain: Chain) -> None:
    """The cases are there: the failed transaction, the burn, the phoenix's code and slot, the Vault's kept code."""
    url = chain.node.url
    statuses = [r["status"] for r in batch(url, [("eth_getTransactionReceipt", [h]) for *_, h in chain.transactions])]
    assert statuses.count("0x0") == 1  # Purse.boom called directly
    supply = [sum(int(b, 16) for b in batch(url, [("eth_getBalance", [a, hex(n)]) for a in WATCHED])) for n in (6, 7)]
    coinbase = batch(url, [("eth_getBlockByNumber", ["0x7", False])])[0]["miner"]
    assert coinbase.lower() in WATCHED  # the fees (no base fee burnt) stay among the watched: only the burn leaves
    assert supply[0] - supply[1] == 503
    code, slot, vault = batch(url, [("eth_getCode", [PHOENIX_AT, hex(HEAD)]),
                                    ("eth_getStorageAt", [PHOENIX_AT, "0x0", hex(HEAD)]),
                                    ("eth_getCode", [VAULT_AT, hex(HEAD)])])  # fmt: skip
    assert (code, int(slot, 16)) == ("0x" + LATER.hex(), 42)
    assert vault != "0x"
    assert batch(url, [("eth_getCode", [DOOMED_AT, hex(4)])])[0] == "0x"


# --- the independent reading: the twin's state at each transaction boundary ---

READS = {"balance_diffs": "eth_getBalance", "nonce_diffs": "eth_getTransactionCount", "code_diffs": "eth_getCode"}
Key = tuple[str, ...]
"""An account, and a slot for storage (0x text, the slot as a 32-byte word)."""


def _word(value: int) -> str:
    return "0x" + format(value, "064x")


def _number(value: Any) -> int:
    return int(value) if isinstance(value, (int, Decimal)) else int.from_bytes(value, "big")


def _keys(name: str, rows: list[dict[str, Any]]) -> list[Key]:
    """The watched accounts (slots), and every one a transaction's row names: each is read, whatever it names."""
    rows = [r for r in rows if r["change_type"] == "transaction"]
    if name == "storage_diffs":
        named = {("0x" + r["address"].hex(), "0x" + r["storage_key"].hex()) for r in rows}
        return sorted({(a.lower(), _word(s)) for a, s in STORAGE} | named)
    return sorted({(a.lower(),) for a in WATCHED} | {("0x" + r["address"].hex(),) for r in rows})


def _read(url: str, name: str, keys: list[Key], numbers: range) -> dict[tuple[int, Key], Any]:
    """Each key's value at each block, from the node's state reads: ints, or the code's bytes."""
    calls = [
        ("eth_getStorageAt", [*key, hex(n)]) if name == "storage_diffs" else (READS[name], [*key, hex(n)])
        for n in numbers
        for key in keys
    ]
    answers = iter(batch(url, calls))
    return {
        (n, key): bytes.fromhex(answer[2:]) if name == "code_diffs" else int(answer, 16)
        for n in numbers
        for key, answer in zip(keys, answers, strict=False)
    }


def _value(name: str, value: Any) -> Any:
    return bytes(value) if name == "code_diffs" else _number(value)


def _pair(name: str) -> tuple[str, str]:
    value = {"storage_diffs": "storage_value", "balance_diffs": "balance"}.get(name, name.split("_")[0])
    return f"{value}_before", f"{value}_after"


def _as_changes(name: str, rows: list[dict[str, Any]]) -> set[tuple[Any, ...]]:
    before, after = _pair(name)
    return {
        (r["block_number"], r["transaction_index"], "0x" + r["transaction_hash"].hex(), "0x" + r["address"].hex(),
         *(["0x" + r["storage_key"].hex()] if name == "storage_diffs" else []),
         _value(name, r[before]), _value(name, r[after]))
        for r in rows
        if r["change_type"] == "transaction"
    }  # fmt: skip


def _expected(chain: Chain, name: str, rows: list[dict[str, Any]]) -> set[tuple[Any, ...]]:
    """Every value that differs between the twin's block k (after the chain's k-th transaction) and k - 1."""
    keys = _keys(name, rows)
    state = _read(chain.twin.url, name, keys, range(len(chain.transactions) + 1))
    # The twin is the chain, a transaction at a time: at each of the chain's blocks their states are equal.
    ends = {number: k + 1 for k, (number, _, _) in enumerate(chain.transactions)}
    mine = _read(chain.node.url, name, keys, range(HEAD + 1))
    for number, k in ends.items():
        assert all(mine[(number, key)] == state[(k, key)] for key in keys), number
    return {
        (number, index, hash_, *key, state[(k, key)], state[(k + 1, key)])
        for k, (number, index, hash_) in enumerate(chain.transactions)
        for key in keys
        if state[(k, key)] != state[(k + 1, key)]
    }


@pytest.fixture(scope="module")
def tables(chain: Chain) -> dict[tuple[str, str], pa.Table]:
    """Each dataset by each route: anvil's own trace_replayBlockTransactions (stateDiff), and through the gateway
    (which passes no trace_ method on) debug_traceBlockByNumber's prestate diffs."""
    return {
        (name, route): collect(name, blocks=f"1:{HEAD}", rpc=url, progress=False)
        for name in NAMES
        for route, url in (("replay", chain.node.url), ("prestate", chain.via_gateway))
    }


@pytest.mark.parametrize("name", NAMES)
def test_every_row_is_a_change_the_state_reads_show(
    chain: Chain, tables: dict[tuple[str, str], pa.Table], name: str
) -> None:
    """Each transaction's rows (by the prestate route) are exactly the values that differ between the twin's states
    around it; the block-level rows are anvil's EIP-2935 system call, one a block."""
    rows = tables[(name, "prestate")].to_pylist()
    assert _as_changes(name, rows) == _expected(chain, name, rows)
    levels = [(r["change_type"], r["block_number"]) for r in rows if r["change_type"] != "transaction"]
    assert levels == ([("system_call", n) for n in range(1, HEAD + 1)] if name == "storage_diffs" else [])


ANVILS_OMISSIONS = {(6, 0, PHOENIX_AT, 1000, 0), (7, 0, PHOENIX_AT, 500, 0)}
"""What anvil 1.7.1's trace_replayBlockTransactions leaves out of its stateDiff: an account that held ether before a
CREATE2 made it and self-destructed it in the same transaction is not named at all, though its balance went to zero
(its prestate tracer names it, absent from ``post``: destroyed)."""


@pytest.mark.parametrize("name", NAMES)
def test_anvils_replay_route_leaves_out_an_account_destroyed_as_it_is_made(
    chain: Chain, tables: dict[tuple[str, str], pa.Table], name: str, tmp_path: Path
) -> None:
    """The replay route's rows are the prestate route's but for anvil's omission, which a run's summary names; a
    verifying run there fails, naming the account and the block whose balances then do not add up."""
    replay = _as_changes(name, tables[(name, "replay")].to_pylist())
    prestate = _as_changes(name, tables[(name, "prestate")].to_pylist())
    left_out = {(n, i, a, before, after) for n, i, _, a, *_, before, after in prestate - replay}
    assert left_out == (ANVILS_OMISSIONS if name == "balance_diffs" else set())
    assert replay <= prestate
    if name != "balance_diffs":
        return
    plain = extract(name, blocks=f"1:{HEAD}", rpc=chain.node.url, out=tmp_path / "plain", progress=False)
    assert "may leave out an account that held ether before a CREATE2" in plain.summary()
    with pytest.raises(ChainframeError) as caught:
        extract(name, blocks=f"1:{HEAD}", rpc=chain.node.url, out=tmp_path, verify=True, progress=False)
    said = str(caught.value)
    assert f"block 6: answered address {PHOENIX_AT} transaction_index 1 balance_before 0" in said
    assert "state at the previous block says 1000 (and 1 more)" in said  # block 7's, from 500


@pytest.fixture(scope="module")
def stored(chain: Chain, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each dataset extracted through the gateway with verify=True: every block proven as extracted."""
    found = {}
    for name in NAMES:
        out = tmp_path_factory.mktemp(name)
        report = extract(name, blocks=f"1:{HEAD}", rpc=chain.via_gateway, out=out, verify=True, progress=False)
        assert report.datasets[name]["verified_blocks"] == HEAD, report
        found[name] = out
    return found


def _rewrite(folder: Path, table: pa.Table) -> None:
    (path,) = folder.glob("*/*.parquet")
    footer = {k: v for k, v in (pq.read_metadata(path).metadata or {}).items() if k != b"ARROW:schema"}
    pq.write_table(table.replace_schema_metadata(footer), path)


def _changed(table: pa.Table, at: int) -> pa.Table:
    name = next(c for c in table.column_names if c.endswith("_after"))
    values = table[name].to_pylist()
    value = values[at]
    values[at] = value + 1 if isinstance(value, (int, Decimal)) else bytes(value[:-1]) + bytes([value[-1] ^ 1])
    return table.set_column(table.column_names.index(name), name, pa.array(values, table[name].type))


def _removed(table: pa.Table, at: int) -> pa.Table:
    return pa.concat_tables([table.slice(0, at), table.slice(at + 1)])


def _moved(table: pa.Table, at: int) -> pa.Table:
    numbers = table["block_number"].to_pylist()
    numbers[at] += 1
    column = pa.array(numbers, table["block_number"].type)
    return table.set_column(table.column_names.index("block_number"), "block_number", column)


@pytest.mark.parametrize("tamper", [_changed, _removed, _moved], ids=["changed", "removed", "moved"])
@pytest.mark.parametrize("name", NAMES)
def test_verify_proves_the_cases_and_fails_a_tampered_row(
    chain: Chain, stored: dict[str, Path], name: str, tamper: Any
) -> None:
    """The row of the CREATE2 that stays (block 7, transaction 1: in balance_diffs between the burn's row and the
    later self-destruct's) changed, removed or moved to the next block: verify fails, naming its block and account."""
    folder = stored[name]
    (path,) = folder.glob("*/*.parquet")
    original = pq.read_table(path)
    rows = original.to_pylist()
    at = next(
        i for i, r in enumerate(rows)
        if (r["block_number"], r["transaction_index"], "0x" + r["address"].hex()) == (7, 1, PHOENIX_AT)
    )  # fmt: skip
    assert verify_stored(folder, rpc=chain.via_gateway).ok
    _rewrite(folder, tamper(original, at))
    try:
        found = verify_stored(folder, rpc=chain.via_gateway)
    finally:
        _rewrite(folder, original)
    assert not found.ok
    named = {f.block_number for f in found.failures if PHOENIX_AT in f"{f.expected} {f.actual} {f.row}"}
    assert 7 in named, found.failures
