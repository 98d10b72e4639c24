"""eth_calls and the ERC-20 views on the devnet chain, against eth_call answers read raw from the node.

The expected values come from JSON-RPC written by hand here (selectors and arguments encoded in this file, answers
decoded here), sent to anvil itself; the datasets go through the gateway, as a user's run would.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from Crypto.Hash import keccak

import chainframe as cf
from chainframe import InputError
from chainframe.cli import main
from chainframe.datasets import DATASETS, BlockRange
from chainframe.datasets._calls import call_answers, execution_error, revert_reason
from chainframe.datasets._view_reader import MARK, VIEW_GAS, _read, reader, view_answers
from chainframe.devnet import DEV_ACCOUNTS, Devnet, GatewaySettings
from chainframe.rpc import AsyncClient, LimitExceeded, MethodNotFound, RateLimited, ServerError

END = 90  # two more tokens are created at blocks 40 and 80 (the workload's create_token)
BALANCE_OF, TOTAL_SUPPLY = "70a08231", "18160ddd"
NAME, SYMBOL, DECIMALS = "06fdde03", "95d89b41", "313ce567"
FAIL = "132e4f3c"  # Nest.fail(uint256): always reverts with Error("Nest: fail")


def _raw(url: str, calls: list[tuple[str, str, int]]) -> list[dict[str, Any]]:
    """Each (to, data, block) as eth_call, in one JSON-RPC batch per 500; the answers' objects in call order."""
    out: list[dict[str, Any]] = []
    for start in range(0, len(calls), 500):
        part = calls[start : start + 500]
        body = [
            {"jsonrpc": "2.0", "id": i, "method": "eth_call", "params": [{"to": to, "data": data}, hex(block)]}
            for i, (to, data, block) in enumerate(part)
        ]
        answers = {a["id"]: a for a in httpx.post(url, json=body, timeout=60).json()}
        out += [answers[i] for i in range(len(part))]
    return out


def _word(answer: dict[str, Any]) -> int | None:
    result = answer.get("result")
    return int(result[2:66], 16) if result is not None and len(result) >= 66 else None


def _as_int(value: Any) -> int | None:
    if value is None:
        return None
    return int.from_bytes(value, "big") if isinstance(value, bytes) else int(value)


@pytest.fixture(scope="module")
def tokens(devnet_session: Devnet) -> list[str]:
    """The workload's Token, the tokens created at 40 and 80 (from their receipts), and Nest: a contract that is no
    token (its views revert)."""
    truth = devnet_session.truth
    created = [t.hash for t in truth.txs if t.kind == "create_token" and t.block <= END]
    assert len(created) == 2
    body = [
        {"jsonrpc": "2.0", "id": i, "method": "eth_getTransactionReceipt", "params": [h]} for i, h in enumerate(created)
    ]
    receipts = sorted(httpx.post(devnet_session.node.url, json=body).json(), key=lambda a: a["id"])
    return [truth.contracts["Token"], *(r["result"]["contractAddress"] for r in receipts), truth.contracts["Nest"]]


@pytest.mark.parametrize("u256", ["decimal", "binary"])
def test_erc20_balances_equal_raw_balance_of(devnet: Devnet, tokens: list[str], u256: str) -> None:
    holders = [*DEV_ACCOUNTS, devnet.truth.contracts["Nest"]]
    table = cf.collect("erc20_balances", blocks=f"0:{END}", rpc=devnet.http_url, tokens=tokens, addresses=holders,
                       u256=u256, progress=False)  # fmt: skip
    assert table.schema == DATASETS["erc20_balances"].schema_for(u256)  # type: ignore[arg-type]
    asked = [(t, h, n) for n in range(END + 1) for t in tokens for h in holders]
    raw = _raw(devnet.node.url, [(t, "0x" + BALANCE_OF + "0" * 24 + h[2:], n) for t, h, n in asked])
    rows = table.to_pylist()
    assert len(rows) == len(asked)
    got = {(r["block_number"], "0x" + r["token_address"].hex(), "0x" + r["address"].hex()): r["balance"] for r in rows}
    assert len(got) == len(rows)
    for (token, holder, n), answer in zip(asked, raw, strict=True):
        assert _as_int(got[(n, token, holder)]) == _word(answer), (n, token, holder)
    if u256 == "decimal":
        assert all(isinstance(r["balance"], Decimal | None) for r in rows)
    # What the plan says, not only what the node says: the deployer holds the whole supply at block 1, then gives
    # 10**24 to each of accounts 1..8 in block 2; Nest holds none and is no token.
    token = tokens[0]
    assert _as_int(got[(1, token, DEV_ACCOUNTS[0])]) == 10**27
    assert _as_int(got[(2, token, DEV_ACCOUNTS[3])]) == 10**24
    assert got[(0, token, DEV_ACCOUNTS[0])] is None  # no code yet: eth_call answers 0x
    assert _as_int(got[(END, token, holders[-1])]) == 0
    assert all(got[(n, tokens[-1], h)] is None for n in range(END + 1) for h in holders)  # Nest reverts
    changing = {_as_int(got[(n, token, DEV_ACCOUNTS[1])]) for n in range(2, END + 1)}
    assert len(changing) > 5  # the workload's transfers move balances block by block


@pytest.mark.parametrize("u256", ["decimal", "binary"])
def test_erc20_supplies_equal_raw_total_supply(devnet: Devnet, tokens: list[str], u256: str) -> None:
    table = cf.collect("erc20_supplies", blocks=f"0:{END}", rpc=devnet.http_url, tokens=tokens, u256=u256,
                       progress=False)  # fmt: skip
    asked = [(t, n) for n in range(END + 1) for t in tokens]
    raw = _raw(devnet.node.url, [(t, "0x" + TOTAL_SUPPLY, n) for t, n in asked])
    got = {(r["block_number"], "0x" + r["token_address"].hex()): r["total_supply"] for r in table.to_pylist()}
    assert len(got) == table.num_rows == len(asked)
    for (token, n), answer in zip(asked, raw, strict=True):
        assert _as_int(got[(n, token)]) == _word(answer), (n, token)
    assert _as_int(got[(1, tokens[0])]) == 10**27
    assert got[(39, tokens[1])] is None
    assert got[(40, tokens[1])] is not None


def _abi_text(answer: dict[str, Any]) -> str | None:
    result = answer.get("result")
    if result is None or len(result) < 2 + 128:
        return None
    raw = bytes.fromhex(result[2:])
    length = int.from_bytes(raw[32:64], "big")
    return raw[64 : 64 + length].decode()


def test_erc20_metadata_equals_raw_views(devnet: Devnet, tokens: list[str]) -> None:
    table = cf.collect("erc20_metadata", blocks=f"0:{END}", rpc=devnet.http_url, tokens=tokens, progress=False)
    asked = [(t, n) for n in range(END + 1) for t in tokens]
    names = _raw(devnet.node.url, [(t, "0x" + NAME, n) for t, n in asked])
    symbols = _raw(devnet.node.url, [(t, "0x" + SYMBOL, n) for t, n in asked])
    decimals = _raw(devnet.node.url, [(t, "0x" + DECIMALS, n) for t, n in asked])
    got = {(r["block_number"], "0x" + r["token_address"].hex()): r for r in table.to_pylist()}
    assert len(got) == table.num_rows == len(asked)
    for i, (token, n) in enumerate(asked):
        row = got[(n, token)]
        assert (row["name"], row["symbol"], row["decimals"]) == (
            _abi_text(names[i]), _abi_text(symbols[i]), _word(decimals[i])
        ), (n, token)  # fmt: skip
    assert (got[(END, tokens[2])]["name"], got[(END, tokens[2])]["symbol"]) == ("Chainframe Token", "CFT")
    assert got[(END, tokens[2])]["decimals"] == 18
    nest = [got[(n, tokens[-1])] for n in range(END + 1)]  # Nest has none of the views: nulls, not an error
    assert all(r["name"] is None and r["symbol"] is None and r["decimals"] is None for r in nest)
    assert "error" in names[len(tokens) * END + len(tokens) - 1]  # and the node did answer it with a revert


def test_a_bytes32_name_is_read_as_its_text() -> None:
    """No devnet token answers with a bytes32 (the workload deploys one ERC-20, with string views), so these are
    MKR's answers as mainnet gives them (name() and symbol() of 0x9f8f72aa9304c8b593d555f12ef6589cc3a579a2 are
    bytes32 "Maker" and "MKR"), beside a string answer, a revert, an empty answer and a decimals above uint8."""
    maker = "0x" + b"Maker".hex().ljust(64, "0")
    mkr = "0x" + b"MKR".hex().ljust(64, "0")
    string = "0x" + (32).to_bytes(32, "big").hex() + (3).to_bytes(32, "big").hex() + b"abc".hex().ljust(64, "0")
    revert = {"message": "execution reverted", "code": 3, "data": "0x"}
    not_utf8 = "0x" + "ff".ljust(64, "0")
    body = {
        "blocks": [7],
        "tokens": ["0x" + "11" * 20, "0x" + "22" * 20, "0x" + "33" * 20],
        "answers": [maker, mkr, "0x" + "12".rjust(64, "0"), string, revert, "0x" + "1" * 64, not_utf8, "0x", revert],
    }
    table = DATASETS["erc20_metadata"].transform([json.dumps(body).encode()], chain_id=1)
    assert [(r["name"], r["symbol"], r["decimals"]) for r in table.to_pylist()] == [
        ("Maker", "MKR", 18),
        ("abc", None, None),
        (None, None, None),
    ]


def test_eth_calls_keep_reverts_as_rows(devnet: Devnet) -> None:
    truth = devnet.truth
    token, nest = truth.contracts["Token"], truth.contracts["Nest"]
    calls = [
        {"to": nest, "data": "0x" + FAIL + "3".rjust(64, "0")},
        {"to": token, "data": "0x" + TOTAL_SUPPLY},
        {"to": token, "data": "0x" + BALANCE_OF + "0" * 24 + DEV_ACCOUNTS[2][2:]},
        {"to": nest, "data": "0x" + NAME},  # no such function: a revert without data
        {"to": DEV_ACCOUNTS[5], "data": "0x" + NAME},  # an account without code: success, no output
    ]
    table = cf.collect("eth_calls", blocks="0:12", rpc=devnet.http_url, calls=calls, progress=False)
    raw = _raw(devnet.node.url, [(c["to"], c["data"], n) for n in range(13) for c in calls])
    rows = table.to_pylist()
    assert len(rows) == len(raw) == 13 * len(calls)
    for row, answer in zip(rows, raw, strict=True):
        call = calls[row["call_index"]]
        assert ("0x" + row["to_address"].hex(), "0x" + row["input"].hex()) == (call["to"], call["data"])
        if "error" in answer:
            assert row["error"] == answer["error"]["message"]
            assert row["error_code"] == answer["error"]["code"]
            assert row["output"] == bytes.fromhex(answer["error"]["data"][2:])
        else:
            assert (row["error"], row["error_code"]) == (None, None)
            assert row["output"] == bytes.fromhex(answer["result"][2:])
    fails = [r for r in rows if r["call_index"] == 0]
    assert all(r["error_code"] == 3 and r["revert_reason"] == "Nest: fail" for r in fails[1:])  # deployed at 1
    assert fails[0]["error"] is None
    assert fails[0]["output"] == b""
    missing = [r for r in rows if r["call_index"] == 3 and r["block_number"] >= 1]
    assert missing
    assert all(r["error_code"] == 3 and r["output"] == b"" and r["revert_reason"] is None for r in missing)
    assert all(r["output"] == b"" and r["error"] is None for r in rows if r["call_index"] == 4)


def test_a_call_with_too_little_gas_is_a_row_too(devnet: Devnet) -> None:
    token = devnet.truth.contracts["Token"]
    table = cf.collect("eth_calls", blocks="3:4", rpc=devnet.http_url, calls=[{"to": token, "data": "0x" + NAME,
                       "gas": 21_000}], progress=False)  # fmt: skip
    raw = _raw_with_gas(devnet.node.url, token, "0x" + NAME, 21_000, 3)
    assert table.num_rows == 2
    assert table["error"][0].as_py() == raw["error"]["message"]
    assert table["error_code"][0].as_py() == raw["error"]["code"]
    assert table["output"][0].as_py() is None  # the node sent no revert data


def _raw_with_gas(url: str, to: str, data: str, gas: int, block: int) -> dict[str, Any]:
    params = [{"to": to, "data": data, "gas": hex(gas)}, hex(block)]
    body = {"jsonrpc": "2.0", "id": 1, "method": "eth_call", "params": params}
    answer: dict[str, Any] = httpx.post(url, json=body).json()
    return answer


class _Answers:
    """A client whose batch answers every call with the same outcome."""

    def __init__(self, outcome: Any) -> None:
        self.outcome = outcome

    async def batch(self, calls: list[Any]) -> list[Any]:
        return [self.outcome for _ in calls]


@pytest.mark.anyio
@pytest.mark.parametrize(
    "error",
    [
        ServerError("missing trie node 3f8a... (path )", code=-32000),
        ServerError("header not found", code=-32000),
        ServerError("execution reverted: state not available", code=3),  # a node's words for pruned state win
        ServerError("something nobody wrote down", code=-32000),
        RateLimited("too many requests"),
        LimitExceeded("execution aborted (timeout = 5s)", reason="timeout"),
        MethodNotFound("the method eth_call does not exist/is not available", code=-32601),
    ],
)
async def test_errors_that_are_not_the_calls_raise(error: Exception) -> None:
    assert not execution_error(error)
    with pytest.raises(type(error)):
        await call_answers(_Answers(error), [{"to": "0x" + "11" * 20}], BlockRange(5, 6))


@pytest.mark.anyio
async def test_execution_errors_are_kept() -> None:
    for error in (
        ServerError("execution reverted", code=3, data="0x"),
        ServerError("out of gas", code=-32000),
        ServerError("invalid opcode: INVALID", code=-32000),
        ServerError("Insufficient funds for gas * price + value", code=-32003),
    ):
        assert execution_error(error), error
        answers = await call_answers(_Answers(error), [{"to": "0x" + "11" * 20}], BlockRange(5, 5))
        assert answers == [{"message": error.detail, "code": error.code, "data": error.data}]


@pytest.mark.parametrize(
    ("dataset", "filters", "says"),
    [
        ("erc20_balances", {"tokens": ["0x12"], "addresses": [DEV_ACCOUNTS[0]]}, "tokens[0] must be 20 bytes"),
        ("erc20_balances", {"tokens": [DEV_ACCOUNTS[0]]}, "needs addresses=[...] (--addresses)"),
        ("erc20_supplies", {"tokens": [DEV_ACCOUNTS[0]], "addresses": [DEV_ACCOUNTS[0]]}, "takes only tokens"),
        ("erc20_metadata", {}, "needs tokens=[...] (--tokens)"),
        ("eth_calls", {"calls": [{"data": "0x06fdde03"}]}, "calls[0] must be a transaction object with at least 'to'"),
        ("eth_calls", {"calls": {"to": DEV_ACCOUNTS[0]}}, "calls must be a non-empty list"),
    ],
)
def test_bad_inputs_are_refused_before_any_request(dataset: str, filters: dict[str, Any], says: str) -> None:
    with pytest.raises(InputError) as refused:
        cf.collect(dataset, blocks="0:3", rpc="http://127.0.0.1:1", progress=False, **filters)  # nothing listens
    assert says in str(refused.value)


def test_dry_prices_each_call() -> None:
    given = {"tokens": [DEV_ACCOUNTS[0], DEV_ACCOUNTS[0].upper().replace("0X", "0x"), DEV_ACCOUNTS[1]],
             "addresses": list(DEV_ACCOUNTS[:3])}  # fmt: skip
    balances = DATASETS["erc20_balances"]
    assert balances.calls(10, balances.check_inputs(given)) == 10  # 6 views a block (the same token twice is one)
    many = {**given, "addresses": [f"0x{n:040x}" for n in range(1, 14)]}
    assert balances.calls(10, balances.check_inputs(many)) == 10 * 2  # 26 views a block: two calls of 24 at most
    metadata = DATASETS["erc20_metadata"]
    assert metadata.calls(10, metadata.check_inputs({"tokens": given["tokens"]})) == 10


@pytest.mark.parametrize("name", ["erc20_balances", "erc20_supplies", "erc20_metadata", "eth_calls"])
def test_schema_describes_them(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", name]) == 0
    out = capsys.readouterr().out
    assert "eth_call" in out
    assert "no block header commits to it" in out
    assert all(any(line.split()[:1] == [c] for line in out.splitlines()) for c in DATASETS[name].columns)


def test_an_extended_folder_equals_one_run(devnet: Devnet, tokens: list[str], tmp_path: Path) -> None:
    holders = list(DEV_ACCOUNTS[:4])
    options: dict[str, Any] = {"rpc": devnet.http_url, "out": tmp_path, "chunk_size": 10, "progress": False}
    first = cf.extract("erc20_balances", blocks="0:29", tokens=tokens[:2], addresses=holders, **options)
    assert first.datasets["erc20_balances"]["written"] == 3
    again = cf.extract("erc20_balances", blocks="0:49", tokens=tokens[:2], addresses=holders, **options)
    assert (again.datasets["erc20_balances"]["written"], again.datasets["erc20_balances"]["skipped"]) == (2, 3)
    files = sorted(tmp_path.rglob("*.parquet"))
    key = [(c, "ascending") for c in DATASETS["erc20_balances"].sort]
    stored = pa.concat_tables([pq.read_table(f) for f in files]).sort_by(key)
    whole = cf.collect("erc20_balances", blocks="0:49", rpc=devnet.http_url, tokens=tokens[:2], addresses=holders,
                       progress=False)  # fmt: skip
    assert stored.select(whole.column_names).equals(whole.sort_by(key))


def test_the_erc20_views_are_one_eth_call_a_block_and_group_of_views(devnet: Devnet, tokens: list[str]) -> None:
    """44 balanceOf a block (4 tokens x 11 holders) are two reader calls a block, 24 and 20 views; Nest's reverts
    (with gas left) are reverts alone too, so no call is asked alone; the rows equal raw calls (above)."""
    assert devnet.gateway is not None
    holders = [*DEV_ACCOUNTS, devnet.truth.contracts["Nest"]]
    devnet.gateway.reset_stats()
    table = cf.collect("erc20_balances", blocks=f"0:{END}", rpc=devnet.http_url, tokens=tokens, addresses=holders,
                       progress=False)  # fmt: skip
    assert devnet.gateway.stats()["calls"]["eth_call"] == (END + 1) * 2
    assert table.num_rows == (END + 1) * 44
    devnet.gateway.reset_stats()
    cf.collect("erc20_metadata", blocks=f"0:{END}", rpc=devnet.http_url, tokens=tokens, progress=False)
    assert devnet.gateway.stats()["calls"]["eth_call"] == END + 1  # 12 views a block


def test_a_node_that_ignores_state_overrides_has_each_view_asked_alone(devnet: Devnet, tokens: list[str]) -> None:
    """Without the override the zero address has no code, so the reader's first call answers nothing: that piece's
    views are each asked alone, and the rows are the node's own answers."""
    assert devnet.gateway is not None
    holders = list(DEV_ACCOUNTS[:3])
    blocks = (END - 4, END)
    devnet.gateway.configure(GatewaySettings(no_state_overrides=True))
    devnet.gateway.reset_stats()
    table = cf.collect("erc20_balances", blocks=f"{blocks[0]}:{blocks[1]}", rpc=devnet.http_url, tokens=tokens,
                       addresses=holders, progress=False)  # fmt: skip
    assert devnet.gateway.stats()["calls"]["eth_call"] == 1 + 5 * len(tokens) * len(holders)
    asked = [(t, h, n) for n in range(blocks[0], blocks[1] + 1) for t in tokens for h in holders]
    raw = _raw(devnet.node.url, [(t, "0x" + BALANCE_OF + "0" * 24 + h[2:], n) for t, h, n in asked])
    got = {(r["block_number"], "0x" + r["token_address"].hex(), "0x" + r["address"].hex()): r["balance"]
           for r in table.to_pylist()}  # fmt: skip
    assert len(got) == len(asked)
    for (token, holder, n), answer in zip(asked, raw, strict=True):
        assert _as_int(got[(n, token, holder)]) == _word(answer), (n, token, holder)


@pytest.mark.anyio
async def test_a_view_the_reader_cannot_answer_as_a_call_alone_is_asked_alone(devnet_session: Devnet) -> None:
    """Each answer equals the node's to the call alone: a view that writes (Store.bump: it halts under STATICCALL
    and is asked alone), a revert with its data (Nest.fail: kept as a revert, the node's revert data), an answer
    longer than the room kept (Token.name() with 32 bytes: asked alone), a token's balanceOf, and an account
    without code."""
    contracts = devnet_session.truth.contracts
    calls = [
        {"to": contracts["Store"], "data": "0x" + keccak.new(digest_bits=256, data=b"bump()").hexdigest()[:8]},
        {"to": contracts["Nest"], "data": "0x" + FAIL + "0" * 63 + "7"},
        {"to": contracts["Token"], "data": "0x" + NAME},
        {"to": contracts["Token"], "data": "0x" + BALANCE_OF + "0" * 24 + DEV_ACCOUNTS[0][2:]},
        {"to": "0x" + "de" * 20, "data": "0x" + TOTAL_SUPPLY},
    ]
    blocks = BlockRange(END - 2, END)
    async with AsyncClient(devnet_session.http_url) as client:
        alone = await call_answers(client, calls, blocks)
        read = await view_answers(client, calls, blocks, room=32)
    assert len(read) == len(alone) == 15
    for mine, node in zip(read, alone, strict=True):
        if isinstance(node, dict):  # the revert: the same data, the node's words aside
            assert mine["data"] == node["data"], (mine, node)
            assert revert_reason(bytes.fromhex(mine["data"][2:])) == "Nest: fail"
        else:
            assert mine == node
    bump, fail, name, balance, nothing = alone[:5]  # what each case is, at the node
    assert len(bump) == len(balance) == 66  # a word: bump's write is kept alone (and thrown away), not a halt
    assert isinstance(fail, dict)
    assert len(name) > 66  # past the 32 bytes kept
    assert nothing == "0x"


def test_an_answer_not_the_readers_is_refused_word_for_word() -> None:
    good = "0x" + MARK + ("00" * 31 + "01") + ("00" * 29 + "005208") + ("00" * 31 + "20") + "ab" * 32
    assert _read(good, 1, 32) == ["0x" + "ab" * 32]
    reverted = good[:66] + "00" * 32 + good[130:]
    assert _read(reverted, 1, 32) == [{"message": "reverted", "code": None, "data": "0x" + "ab" * 32}]
    exhausted = reverted[:130] + f"{VIEW_GAS:064x}" + reverted[194:]
    assert _read(exhausted, 1, 32) == [None]  # out of its gas, or halted: asked alone
    assert _read(good.replace(MARK, "00" * 32), 1, 32) is None  # no mark: the override was not applied
    assert _read(good[:-2], 1, 32) is None
    assert _read(good, 2, 32) is None
    assert _read(None, 1, 32) is None


def test_a_view_that_calls_back_its_caller_finds_no_code_there_as_a_call_alone_does(devnet: Devnet) -> None:
    """A view (put at an address by a state override here) that CALLs its caller and answers the size of what came
    back: the zero address has no code, so a call alone answers 0; the reader stops when called by another, so its
    answer is 0 too."""
    view, zero = "0x" + "c4" * 20, "0x" + "00" * 20
    # CALL(GAS, CALLER, 0, 0, 0, 0, 32); POP; mem[0] = RETURNDATASIZE; RETURN(0, 32)
    code = "0x60206000600060006000335af1503d60005260206000f3"
    block = hex(END)
    alone = _node_call(devnet.node.url, [{"to": view}, block, {view: {"code": code}}])
    override = {zero: {"code": reader([{"to": view, "data": "0x"}], 32)}, view: {"code": code}}
    read = _node_call(devnet.node.url, [{"from": zero, "to": zero, "gas": "0x100000", "gasPrice": "0x0"}, block,
                                        override])  # fmt: skip
    assert alone == "0x" + "00" * 32
    assert _read(read, 1, 32) == [alone]


def _node_call(url: str, params: list[Any]) -> Any:
    body = {"jsonrpc": "2.0", "id": 1, "method": "eth_call", "params": params}
    return httpx.post(url, json=body, timeout=30).json()["result"]
