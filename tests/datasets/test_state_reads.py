"""State reads (balances, nonces, codes, slots) on the devnet chain, through the gateway: every row equals the node's
own answer to the same call, asked one by one with no chainframe code in between, in both u256 modes; ``every``
keeps the multiples of N; an extended folder holds what one run gives; a reorganization between runs is repaired;
bad inputs are refused before any request; ``schema`` describes them."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from Crypto.Hash import keccak

from chainframe import InputError, collect, extract
from chainframe.cli import main
from chainframe.datasets._convert import DecodeError
from chainframe.datasets._state import ACCOUNTS_PER_CALL, BALANCES, CODES, NONCE_SEARCH, NONCES, SLOT_MARK, SLOTS
from chainframe.devnet import DEV_ACCOUNTS, Devnet, GatewaySettings, MissingMethod
from chainframe.devnet._node_rpc import NodeRPC
from chainframe.devnet._workload import authority_address
from chainframe.store import load_series

BLOCKS = (30, 100)
"""A span with contract creations (every 40 blocks), transfers, stores and set-code transactions in it."""
KEYS = ["0x" + "0" * 64, "0x" + "0" * 63 + "1", "0x" + "0" * 63 + "2"]
ABSENT = "0x000000000000000000000000000000000000dead"


def _node(url: str, method: str, *params: Any) -> Any:
    """One JSON-RPC call, straight to the node (no batching, no chainframe client)."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)}).encode()
    request = urllib.request.Request(url, data=body, headers={"content-type": "application/json"})  # noqa: S310
    with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310 (the local node, http)
        return json.loads(answer.read())["result"]


@pytest.fixture(scope="module")
def accounts(devnet_session: Devnet) -> list[str]:
    """The workload's busiest sender, a contract created inside the span (no code before, code after), the
    contracts whose storage the workload writes, and an account nobody touched."""
    truth = devnet_session.truth
    senders: dict[str, int] = {}
    for tx in truth.txs:
        if BLOCKS[0] <= tx.block <= BLOCKS[1]:
            senders[tx.sender] = senders.get(tx.sender, 0) + 1
    busiest = max(senders, key=lambda s: senders[s])
    created = next(tx for tx in truth.txs if tx.to is None and BLOCKS[0] < tx.block <= BLOCKS[1] and tx.status == 1)
    receipt = _node(devnet_session.node.url, "eth_getTransactionReceipt", created.hash)
    return [busiest.lower(), receipt["contractAddress"].lower(), truth.contracts["Store"], truth.contracts["Token"],
            ABSENT]  # fmt: skip


def _rows(table: pa.Table) -> list[dict[str, Any]]:
    return table.to_pylist()


def _asked(accounts: list[str], every: int = 1, keys: tuple[str, ...] = ()) -> list[tuple[Any, ...]]:
    """The (block, address[, key]) a run over BLOCKS must give rows for, in the dataset's sort order."""
    blocks = [n for n in range(BLOCKS[0], BLOCKS[1] + 1) if n % every == 0]
    found = [(n, bytes.fromhex(a[2:])) for n in blocks for a in accounts]
    if keys:
        found = [(n, a, bytes.fromhex(k[2:])) for n, a in found for k in keys]
    return sorted(found)


def _collect(devnet: Devnet, dataset: str, accounts: list[str], **options: Any) -> pa.Table:
    blocks = f"{BLOCKS[0]}:{BLOCKS[1]}"
    return collect(dataset, blocks=blocks, rpc=devnet.http_url, addresses=accounts, progress=False, **options)


@pytest.mark.parametrize("u256", ["decimal", "binary"])
def test_balances_are_the_nodes_eth_getbalance(devnet: Devnet, accounts: list[str], u256: str) -> None:
    table = _collect(devnet, "balances", accounts, u256=u256)
    assert table.schema.field("balance").type == (pa.binary(32) if u256 == "binary" else pa.decimal128(38, 0))
    rows = _rows(table)
    assert [(r["block_number"], r["address"]) for r in rows] == _asked(accounts)
    seen = set()
    for r in rows:
        want = int(_node(devnet.node.url, "eth_getBalance", "0x" + r["address"].hex(), hex(r["block_number"])), 16)
        got = int.from_bytes(r["balance"], "big") if u256 == "binary" else int(r["balance"])
        assert isinstance(r["balance"], bytes if u256 == "binary" else Decimal)
        assert got == want, r
        assert r["chain_id"] == devnet.truth.chain_id
        seen.add((r["address"], got))
    busiest = bytes.fromhex(accounts[0][2:])
    assert len({b for a, b in seen if a == busiest}) > 5  # the sender's balance moves: the test reads real change


def test_balances_past_one_calls_accounts_take_a_call_per_group_and_equal_eth_getbalance(
    devnet: Devnet, accounts: list[str]
) -> None:
    """More accounts than one eth_call reads (the zero address, which is the call's sender, among them, and the
    busiest sender last): each block costs two calls, and every balance is the node's own eth_getBalance."""
    assert devnet.gateway is not None
    filler = [f"0x{n:040x}" for n in range(1, ACCOUNTS_PER_CALL + 40)]
    many = ["0x" + "0" * 40, *filler, *accounts]
    blocks = (BLOCKS[0], BLOCKS[0] + 5)
    devnet.gateway.reset_stats()
    table = collect("balances", blocks=f"{blocks[0]}:{blocks[1]}", rpc=devnet.http_url, addresses=many,
                    progress=False)  # fmt: skip
    calls = devnet.gateway.stats()["calls"]
    assert calls["eth_call"] == 6 * 2
    assert calls.get("eth_getBalance", 0) <= 1  # the check that the node keeps the first block's state
    assert table.num_rows == 6 * len(many)
    rows = table.to_pylist()
    watched = {"0x" + "0" * 40, *accounts, filler[0], filler[-1]}
    for r in rows:
        address = "0x" + r["address"].hex()
        if address in watched:
            want = int(_node(devnet.node.url, "eth_getBalance", address, hex(r["block_number"])), 16)
            assert int(r["balance"]) == want, r
    assert {int(r["balance"]) for r in rows if "0x" + r["address"].hex() == accounts[0]} != {0}


def _reader_answers(words: list[str]) -> bytes:
    """A batch answer of eth_call results (``words`` as each result's hex), ids in order."""
    return json.dumps([{"jsonrpc": "2.0", "id": i, "result": w} for i, w in enumerate(words)]).encode()


@pytest.mark.parametrize(
    ("result", "why"),
    [
        ("0x" + "00" * 31 + "07", None),
        ("0x" + "00" * 32, None),
        ("0x" + "00" * 20 + "AB" * 12, None),  # upper case hex
        ("0x" + "00" * 31, "32-byte words its call asked for"),  # a byte short
        ("0x" + "00" * 33, "32-byte words its call asked for"),  # a byte more
        ("0x" + "0g" + "00" * 31, "not hex"),
        ("0x", "32-byte words its call asked for"),  # the empty answer of a node that ran no code
        (None, "32-byte words its call asked for"),
    ],
)
def test_a_balance_readers_answer_is_checked_word_by_word(result: str | None, why: str | None) -> None:
    """Each eth_call's answer must be exactly a 32-byte word an account it read: anything else is a decode error, not
    rows (the engine asks again, then names the method and blocks)."""
    plan = {"blocks": [5, 6], "addresses": ["0x" + "11" * 20], "keys": []}
    good = "0x" + "00" * 31 + "01"
    bodies = [json.dumps(plan).encode(), _reader_answers([good, result])]  # type: ignore[list-item]
    if why is None:
        table = BALANCES.transform(bodies, chain_id=1)
        assert [int(b) for b in table["balance"].to_pylist()] == [1, int(result[2:], 16)]  # type: ignore[index]
    else:
        with pytest.raises(DecodeError, match=why):
            BALANCES.transform(bodies, chain_id=1)


def _counts_by_node(url: str, rows: list[dict[str, Any]]) -> list[int]:
    return [
        int(_node(url, "eth_getTransactionCount", "0x" + r["address"].hex(), hex(r["block_number"])), 16) for r in rows
    ]


def test_nonces_are_one_eth_call_a_block_and_the_nodes_transaction_count(devnet: Devnet, accounts: list[str]) -> None:
    """The zero address (a node's default sender of a call) and the reader's own first choice of sender are among
    the accounts: a call's sender has its nonce raised before the code runs, so the reader sends from neither."""
    assert devnet.gateway is not None
    read = [*accounts, "0x" + "0" * 40, f"0x{0x5107:040x}"]
    devnet.gateway.reset_stats()
    rows = _rows(_collect(devnet, "nonces", read))
    calls = devnet.gateway.stats()["calls"]
    assert calls["eth_call"] == BLOCKS[1] - BLOCKS[0] + 1
    assert "eth_getTransactionCount" not in calls
    assert [(r["block_number"], r["address"]) for r in rows] == _asked(read)
    assert [r["nonce"] for r in rows] == _counts_by_node(devnet.node.url, rows)
    sender = [r["nonce"] for r in rows if r["address"] == bytes.fromhex(accounts[0][2:])]
    assert sender == sorted(sender)
    assert sender[-1] > sender[0]
    assert {r["nonce"] for r in rows if r["address"] == bytes.fromhex(accounts[2][2:])} == {1}  # a contract's


def test_nonces_fall_back_to_eth_gettransactioncount_where_no_nonce_fits(devnet: Devnet, accounts: list[str]) -> None:
    """A node that refuses the reader (eth_call answered as missing) has every row read by eth_getTransactionCount; a
    precompile's address (the node runs SHA-256, not the probe) has its rows read so: the earliest first, then the
    rest, as none of them fits a nonce; and a node that ignores state overrides (no probe answers: the first call's
    words are all zero) has its piece counted after that call."""
    assert devnet.gateway is not None
    sender, precompile = accounts[0], "0x" + "0" * 39 + "2"
    blocks = f"{BLOCKS[0]}:{BLOCKS[0] + 4}"
    devnet.gateway.configure(GatewaySettings(missing=(MissingMethod(method="eth_call"),)))
    devnet.gateway.reset_stats()
    try:
        refused = _rows(collect("nonces", blocks=blocks, rpc=devnet.http_url, addresses=[sender], progress=False))
    finally:
        devnet.gateway.configure(GatewaySettings())
    assert devnet.gateway.stats()["calls"]["eth_getTransactionCount"] == 5
    assert [r["nonce"] for r in refused] == _counts_by_node(devnet.node.url, refused)
    devnet.gateway.reset_stats()
    both = _rows(collect("nonces", blocks=blocks, rpc=devnet.http_url, addresses=[sender, precompile],
                         progress=False))  # fmt: skip
    calls = devnet.gateway.stats()["calls"]
    assert (calls["eth_call"], calls["eth_getTransactionCount"]) == (5, 5)
    assert [r["nonce"] for r in both] == _counts_by_node(devnet.node.url, both)
    devnet.gateway.configure(GatewaySettings(no_state_overrides=True))  # the node asked without the probes
    devnet.gateway.reset_stats()
    try:
        ignored = _rows(collect("nonces", blocks=blocks, rpc=devnet.http_url, addresses=[sender], progress=False))
    finally:
        devnet.gateway.configure(GatewaySettings())
    calls = devnet.gateway.stats()["calls"]
    assert (calls["eth_call"], calls["eth_getTransactionCount"]) == (1, 5)  # the first call's words all zero
    assert [r["nonce"] for r in ignored] == _counts_by_node(devnet.node.url, ignored)


def test_a_nonce_that_jumps_past_the_search_is_read_by_eth_gettransactioncount(own_chain: Devnet) -> None:
    """An account whose nonce jumps by more than the search tries (anvil_setNonce, which changes the head block's
    state, twice) has the earliest row of the first jump read by eth_getTransactionCount, the rows after it found from
    it, and the rows of the second jump read by eth_getTransactionCount."""
    jumper = "0x" + "77" * 20
    node = NodeRPC(own_chain.node.url)
    try:
        start = int(node.call("eth_blockNumber"), 16)
        for nonce in (NONCE_SEARCH * 5, None, NONCE_SEARCH * 9 + 3):
            node.call("evm_mine")
            if nonce is not None:
                node.call("anvil_setNonce", jumper, hex(nonce))
        node.call("evm_mine")
    finally:
        node.close()
    assert own_chain.gateway is not None
    own_chain.gateway.reset_stats()
    rows = _rows(collect("nonces", blocks=f"{start}:{start + 4}", rpc=own_chain.http_url, addresses=[jumper],
                         progress=False))  # fmt: skip
    assert [r["nonce"] for r in rows] == [0, *[NONCE_SEARCH * 5] * 2, *[NONCE_SEARCH * 9 + 3] * 2]
    assert [r["nonce"] for r in rows] == _counts_by_node(own_chain.node.url, rows)
    assert own_chain.gateway.stats()["calls"]["eth_getTransactionCount"] == 3  # block start + 1, then the last two


def test_a_nonce_readers_answer_must_be_a_create_address_at_the_nonce_named() -> None:
    address = "0x" + "11" * 20
    made = _keccak(bytes.fromhex("d694" + "11" * 20 + "07"))[24:]  # rlp([address, 7])
    plan = {"blocks": [5], "addresses": [address], "keys": [], "answers": 1, "nonces": [7], "counted_at": []}
    good = _reader_answers(["0x" + "00" * 12 + made])
    assert NONCES.transform([json.dumps(plan).encode(), good], chain_id=1)["nonce"].to_pylist() == [7]
    with pytest.raises(DecodeError, match="CREATE at 8"):
        NONCES.transform([json.dumps({**plan, "nonces": [8]}).encode(), good], chain_id=1)
    with pytest.raises(DecodeError, match="null result"):
        NONCES.transform([json.dumps({**plan, "nonces": [None]}).encode(), good], chain_id=1)


def test_codes_are_the_nodes_code_and_its_keccak(devnet: Devnet, accounts: list[str]) -> None:
    rows = _rows(_collect(devnet, "codes", accounts))
    assert [(r["block_number"], r["address"]) for r in rows] == _asked(accounts)
    for r in rows:
        want = _node(devnet.node.url, "eth_getCode", "0x" + r["address"].hex(), hex(r["block_number"]))
        assert r["code"] == bytes.fromhex(want[2:]), r["block_number"]
        assert r["code_hash"] == keccak.new(digest_bits=256, data=r["code"]).digest()
        proof = _node(devnet.node.url, "eth_getProof", "0x" + r["address"].hex(), [], hex(r["block_number"]))
        assert r["code_hash"] == bytes.fromhex(proof["codeHash"][2:])  # the hash the state trie holds
    created = [r["code"] for r in rows if r["address"] == bytes.fromhex(accounts[1][2:])]
    assert created[0] == b""  # created inside the span: empty before, code after
    assert created[-1] != b""
    assert all(r["code"] == b"" for r in rows if r["address"] == bytes.fromhex(ABSENT[2:]))


def test_codes_read_each_accounts_code_once_a_hash_and_equal_eth_getcode(devnet: Devnet, accounts: list[str]) -> None:
    """The codes' hashes come a block at a time (one eth_call), each account's code once for each hash it has in the
    piece: the EIP-7702 authority (delegated from block 2), a contract created inside the span, the busiest sender."""
    assert devnet.gateway is not None
    every = [*accounts, authority_address().lower()]
    devnet.gateway.reset_stats()
    rows = _rows(collect("codes", blocks="0:120", rpc=devnet.http_url, addresses=every, progress=False))
    calls = devnet.gateway.stats()["calls"]
    assert calls["eth_call"] == 121
    changes = {(r["address"], r["code"]) for r in rows if r["code"]}
    # once a code in each piece of the range the run read (two here), against 121 a contract before
    assert len(changes) == 4
    assert len(changes) <= calls["eth_getCode"] <= 2 * len(changes)
    for r in rows:
        want = _node(devnet.node.url, "eth_getCode", "0x" + r["address"].hex(), hex(r["block_number"]))
        assert r["code"] == bytes.fromhex(want[2:]), (r["block_number"], r["address"].hex())
    delegated = [r["code"] for r in rows if r["address"] == bytes.fromhex(every[-1][2:])]
    assert delegated[0] == b""
    assert delegated[-1][:3] == b"\xef\x01\x00"  # the designation: 0xef0100 and the address delegated to


def _codes_bodies(words: list[str], codes_at: list[list[Any]], codes: list[str]) -> list[bytes]:
    plan = {"blocks": [5, 6], "addresses": ["0x" + "11" * 20], "keys": [], "hash_answers": 1, "codes_at": codes_at}
    hashes = _reader_answers(["0x" + word for word in words])
    return [json.dumps(plan).encode(), hashes, *([_reader_answers(codes)] if codes else [])]


def _keccak(data: bytes) -> str:
    return keccak.new(digest_bits=256, data=data).hexdigest()


def test_a_codes_answer_is_checked_against_the_hashes_read() -> None:
    """A code must hash to the word the block's call read; where a node hashes a delegated account as EIP-7702
    says (keccak of 0xef01, whatever it delegates to), its code is read at each block and must be a designation."""
    code = bytes.fromhex("6080604052")
    one = _codes_bodies([_keccak(code)] * 2, [["0x" + "11" * 20, 5]], ["0x" + code.hex()])
    assert CODES.transform(one, chain_id=1)["code"].to_pylist() == [code, code]
    empty = _codes_bodies([_keccak(b"")] * 2, [], [])
    assert CODES.transform(empty, chain_id=1)["code"].to_pylist() == [b"", b""]
    wrong = _codes_bodies([_keccak(code)] * 2, [["0x" + "11" * 20, 5]], ["0x6080"])
    with pytest.raises(DecodeError, match="does not hash"):
        CODES.transform(wrong, chain_id=1)
    designated = [bytes.fromhex("ef0100" + "22" * 20), bytes.fromhex("ef0100" + "33" * 20)]
    at_each = [["0x" + "11" * 20, 5], ["0x" + "11" * 20, 6]]
    both = _codes_bodies([_keccak(b"\xef\x01")] * 2, at_each, ["0x" + d.hex() for d in designated])
    assert CODES.transform(both, chain_id=1)["code"].to_pylist() == designated
    not_one = _codes_bodies([_keccak(b"\xef\x01")] * 2, at_each, ["0x" + code.hex()] * 2)
    with pytest.raises(DecodeError, match="not a delegation designation"):
        CODES.transform(not_one, chain_id=1)


def test_slots_are_the_nodes_storage_words(devnet: Devnet, accounts: list[str]) -> None:
    rows = _rows(_collect(devnet, "slots", accounts[2:], storage_keys=KEYS))
    assert [(r["block_number"], r["address"], r["storage_key"]) for r in rows] == _asked(accounts[2:], keys=tuple(KEYS))
    for r in rows:
        args = ("0x" + r["address"].hex(), "0x" + r["storage_key"].hex(), hex(r["block_number"]))
        want = _node(devnet.node.url, "eth_getStorageAt", *args)
        assert r["storage_value"] == int(want, 16).to_bytes(32, "big"), r
    assert any(r["storage_value"] != bytes(32) for r in rows)


def test_slots_are_one_eth_call_an_account_and_block_where_the_node_applies_state_overrides(
    devnet: Devnet, accounts: list[str]
) -> None:
    assert devnet.gateway is not None
    devnet.gateway.reset_stats()
    rows = _rows(_collect(devnet, "slots", accounts[2:], storage_keys=KEYS))
    calls = devnet.gateway.stats()["calls"]
    assert calls["eth_call"] == (BLOCKS[1] - BLOCKS[0] + 1) * len(accounts[2:])  # 3 keys each
    assert "eth_getStorageAt" not in calls
    assert len(rows) == 3 * calls["eth_call"]


def _slots_by_node(devnet: Devnet, address: str) -> list[bytes]:
    return [
        int(_node(devnet.node.url, "eth_getStorageAt", address, k, hex(n)), 16).to_bytes(32, "big")
        for n in range(BLOCKS[0], BLOCKS[0] + 5)
        for k in KEYS
    ]


def test_slots_fall_back_to_eth_getstorageat_where_the_override_is_refused_or_not_applied(
    devnet: Devnet, accounts: list[str]
) -> None:
    """A node that refuses the call (here: eth_call answered as missing), or that runs the account's own code instead
    of the reader (a precompile's address: the node runs the precompile, so the answer lacks the reader's mark; a
    node that ignores state overrides), has its piece read by eth_getStorageAt per key: the rows are the node's own
    either way."""
    assert devnet.gateway is not None
    store, precompile = accounts[3], "0x" + "0" * 39 + "2"  # Token's storage (written), SHA-256's address
    blocks = f"{BLOCKS[0]}:{BLOCKS[0] + 4}"
    devnet.gateway.configure(GatewaySettings(missing=(MissingMethod(method="eth_call"),)))
    devnet.gateway.reset_stats()
    refused = _rows(collect("slots", blocks=blocks, rpc=devnet.http_url, addresses=[store], storage_keys=KEYS,
                            progress=False))  # fmt: skip
    assert devnet.gateway.stats()["calls"]["eth_getStorageAt"] == 15
    assert [r["storage_value"] for r in refused] == _slots_by_node(devnet, store)
    assert any(r["storage_value"] != bytes(32) for r in refused)
    devnet.gateway.configure(GatewaySettings())
    devnet.gateway.reset_stats()
    unmarked = _rows(collect("slots", blocks=blocks, rpc=devnet.http_url, addresses=[precompile], storage_keys=KEYS,
                             progress=False))  # fmt: skip
    calls = devnet.gateway.stats()["calls"]
    assert (calls["eth_call"], calls["eth_getStorageAt"]) == (1, 15)  # the first call, then each key
    assert [r["storage_value"] for r in unmarked] == _slots_by_node(devnet, precompile)
    devnet.gateway.configure(GatewaySettings(no_state_overrides=True))  # the node asked without the override
    devnet.gateway.reset_stats()
    ignored = _rows(collect("slots", blocks=blocks, rpc=devnet.http_url, addresses=[store], storage_keys=KEYS,
                            progress=False))  # fmt: skip
    calls = devnet.gateway.stats()["calls"]
    # Token's own code meets the keys as calldata and reverts: an error in a batch's answer is asked once more alone
    assert (calls["eth_call"], calls["eth_getStorageAt"]) == (2, 15)
    assert [r["storage_value"] for r in ignored] == _slots_by_node(devnet, store)


def test_a_slot_readers_answer_must_carry_its_mark() -> None:
    plan = {"blocks": [5], "addresses": ["0x" + "11" * 20], "keys": KEYS[:2], "each": False}
    value = "00" * 31 + "2a"
    good = json.dumps([{"jsonrpc": "2.0", "id": 0, "result": "0x" + SLOT_MARK + value + "00" * 32}]).encode()
    table = SLOTS.transform([json.dumps(plan).encode(), good], chain_id=1)
    assert table["storage_value"].to_pylist() == [bytes.fromhex(value), bytes(32)]
    unmarked = good.replace(SLOT_MARK.encode(), b"00" * 32)
    with pytest.raises(DecodeError, match="mark"):
        SLOTS.transform([json.dumps(plan).encode(), unmarked], chain_id=1)


def test_every_keeps_the_multiples_of_n(devnet: Devnet, accounts: list[str]) -> None:
    whole = _rows(_collect(devnet, "balances", accounts))
    stepped = _rows(_collect(devnet, "balances", accounts, every=7))
    assert [(r["block_number"], r["address"]) for r in stepped] == _asked(accounts, every=7)
    assert {r["block_number"] for r in stepped} == {35, 42, 49, 56, 63, 70, 77, 84, 91, 98}
    assert stepped == [r for r in whole if r["block_number"] % 7 == 0]
    # A range starting off the step, and one block with none on it, read the same blocks / nothing.
    assert collect("nonces", blocks="36:36", rpc=devnet.http_url, addresses=accounts, every=7).num_rows == 0
    codes = collect("codes", blocks="36:42", rpc=devnet.http_url, addresses=accounts, every=7)
    assert codes["block_number"].to_pylist() == [42] * len(accounts)


def _stored(folder: Path) -> dict[str, pa.Table]:
    return {p.name: pq.read_table(p) for p in sorted(folder.rglob("*.parquet"))}


def test_an_extended_folder_holds_what_one_run_gives(devnet: Devnet, accounts: list[str], tmp_path: Path) -> None:
    extended, once = tmp_path / "extended", tmp_path / "once"
    options: dict[str, Any] = {"rpc": devnet.http_url, "addresses": accounts, "chunk_size": 25, "every": 3,
                               "progress": False}  # fmt: skip
    for dataset in ("balances", "slots"):
        keys = {"storage_keys": KEYS} if dataset == "slots" else {}
        extract(dataset, blocks="1:40", out=extended, **options, **keys)
        report = extract(dataset, blocks="1:110", out=extended, **options, **keys)  # the tip chunk grows in place
        assert report.datasets
        extract(dataset, blocks="1:110", out=once, **options, **keys)
    first = _stored(extended)
    assert first.keys() == _stored(once).keys()
    for name, table in first.items():
        assert table.equals(_stored(once)[name]), name
    again = extract("balances", blocks="1:110", out=extended, **options)  # nothing left to read
    assert sum(d["rows"] for d in again.datasets.values()) == 0
    assert _stored(extended).keys() == first.keys()
    for name, table in _stored(extended).items():
        assert table.equals(first[name]), name
    series = [p for p in extended.iterdir() if p.is_dir() and not p.name.startswith(".")]
    assert sorted(p.name.split("__")[0] for p in series) == ["balances", "slots"]
    for folder in series:  # slots 0..24, 25..49, ..., 100..124 (its first chunk from block 1, its last to 110)
        assert [(c.meta.start, c.meta.end) for c in load_series(folder).chunks] == [
            (1, 24), (25, 49), (50, 74), (75, 99), (100, 110)]  # fmt: skip


@pytest.fixture
def own_chain() -> Iterator[Devnet]:
    """A devnet of its own: the reorg test rewrites its chain."""
    with Devnet() as devnet:
        yield devnet


def test_a_reorg_between_runs_is_repaired(own_chain: Devnet, tmp_path: Path) -> None:
    out, clean = tmp_path / "out", tmp_path / "clean"
    options: dict[str, Any] = {"rpc": own_chain.http_url, "addresses": DEV_ACCOUNTS[:2], "chunk_size": 100,
                               "progress": False}  # fmt: skip
    extract("balances", blocks="0:latest", out=out, **options)
    head = own_chain.truth.head
    before = int(_node(own_chain.node.url, "eth_getBalance", DEV_ACCOUNTS[1], hex(head)), 16)
    node = NodeRPC(own_chain.node.url)
    try:  # the fork's first block moves wei between the two accounts read: their balances change from there on
        node.call("anvil_reorg", 3, [[{"from": DEV_ACCOUNTS[0], "to": DEV_ACCOUNTS[1], "value": hex(10**18)}, 0]])
    finally:
        node.close()
    report = extract("balances", blocks="0:latest", out=out, **options)
    assert [(r["fork_block"], r["depth"]) for r in report.reorgs] == [(head - 2, 3)]
    extract("balances", blocks="0:latest", out=clean, **options)
    assert _stored(out).keys() == _stored(clean).keys()
    for name, table in _stored(out).items():
        assert table.equals(_stored(clean)[name]), name
    rows = [r for t in _stored(out).values() for r in t.to_pylist() if r["block_number"] == head]
    receiver = next(int(r["balance"]) for r in rows if r["address"] == bytes.fromhex(DEV_ACCOUNTS[1][2:]))
    assert receiver == int(_node(own_chain.node.url, "eth_getBalance", DEV_ACCOUNTS[1], hex(head)), 16)
    assert receiver != before  # the rows kept are the new fork's


@pytest.mark.parametrize(
    ("dataset", "inputs", "message"),
    [
        ("balances", {}, "dataset 'balances' needs addresses=[...] (--addresses)"),
        ("balances", {"addresses": ["0x5fbd"]}, "addresses[0] must be 20 bytes"),
        ("nonces", {"addresses": [ABSENT], "every": 0}, "every must be a whole number of blocks, 1 or more"),
        ("codes", {"addresses": [ABSENT], "every": "often"}, "every must be a whole number of blocks"),
        ("slots", {"addresses": [ABSENT]}, "dataset 'slots' needs storage_keys=[...] (--storage-key)"),
        ("slots", {"addresses": [ABSENT], "storage_keys": ["0x1"]}, "storage_keys[0] must be 32 bytes"),
        (
            "balances",
            {"addresses": [ABSENT], "storage_keys": KEYS[:1]},
            "takes only addresses, every; got storage_keys",
        ),
    ],
)
def test_bad_inputs_are_refused_before_any_request(
    devnet: Devnet, dataset: str, inputs: dict[str, Any], message: str
) -> None:
    assert devnet.gateway is not None
    with pytest.raises(InputError) as refused:
        collect(dataset, blocks="1:10", rpc=devnet.http_url, **inputs)
    assert message in str(refused.value)
    assert devnet.gateway.stats()["calls"] == {}


def test_the_command_line_refuses_a_second_step(
    devnet: Devnet, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["extract", "balances", "--blocks", "1:10", "--addresses", ABSENT, "--every", "2", "3", "--out",
            str(tmp_path), "--rpc", devnet.http_url]  # fmt: skip
    assert main(argv) == 2
    assert "every takes one number of blocks" in capsys.readouterr().err
    assert devnet.gateway is not None
    assert devnet.gateway.stats()["calls"] == {}


def test_schema_describes_them(capsys: pytest.CaptureFixture[str]) -> None:
    for dataset, columns in (("balances", ["balance"]), ("nonces", ["nonce"]), ("codes", ["code_hash", "code"]),
                             ("slots", ["storage_key", "storage_value"])):  # fmt: skip
        assert main(["schema", dataset]) == 0
        text = capsys.readouterr().out
        assert text.startswith(f"{dataset}: ")
        for column in ["chain_id", "block_number", "address", *columns]:
            assert f"\n  {column} " in text, (dataset, column)
        assert "addresses (--addresses, needed)" in text
        assert "every (--every)" in text
        assert "every column is proven by chainframe verify" in text
