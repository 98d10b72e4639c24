"""``eth_calls`` with ``function=``: a row per call of a listed function, its arguments and what it returned
(``returns (...)``) as typed columns. The expected values are the node's raw eth_call answers (asked here with
httpx, not through chainframe) decoded with eth-abi; a call that reverted keeps its error and null outputs, an output
that does not decode with the declared types is a row with ``decode_error``, never a crash or a dropped row."""

from __future__ import annotations

from typing import Any

import httpx
import pyarrow as pa
import pytest
from eth_abi import decode as abi_decode  # type: ignore[attr-defined]
from eth_abi import encode as abi_encode  # type: ignore[attr-defined]
from eth_utils import keccak  # type: ignore[attr-defined]

import chainframe as cf
from chainframe import InputError
from chainframe.devnet import DEV_ACCOUNTS, Devnet

END = 12
FUNCTIONS = [
    "balanceOf(address owner) returns (uint256 balance)",
    "name() returns (string)",
    "decimals() returns (string wrong)",  # a uint8 read as a string: its word is an offset past the end
    "fail(uint256 n) returns (uint256 r)",  # Nest's: always reverts
]


def _data(signature: str, types: list[str], args: list[Any]) -> str:
    return "0x" + (keccak(text=signature)[:4] + abi_encode(types, args)).hex()


def _raw(url: str, calls: list[dict[str, str]], blocks: range) -> dict[tuple[int, int], dict[str, Any]]:
    body = [{"jsonrpc": "2.0", "id": n * 100 + i, "method": "eth_call", "params": [call, hex(n)]}
            for n in blocks for i, call in enumerate(calls)]  # fmt: skip
    return {(a["id"] // 100, a["id"] % 100): a for a in httpx.post(url, json=body, timeout=60).json()}


def test_eth_calls_outputs_decoded_with_the_functions(devnet: Devnet) -> None:
    token, nest = devnet.truth.contracts["Token"], devnet.truth.contracts["Nest"]
    holder = DEV_ACCOUNTS[1]
    calls = [
        {"to": token, "data": _data("balanceOf(address)", ["address"], [holder])},
        {"to": token, "data": _data("name()", [], [])},
        {"to": token, "data": _data("decimals()", [], [])},
        {"to": nest, "data": _data("fail(uint256)", ["uint256"], [7])},
        {"to": token, "data": _data("totalSupply()", [], [])},  # no listed function: not a row of this series
    ]
    table = cf.collect("eth_calls", blocks=f"0:{END}", rpc=devnet.http_url, calls=calls, function=FUNCTIONS,
                       progress=False)  # fmt: skip
    raw = _raw(devnet.node.url, calls, range(END + 1))
    assert table.num_rows == (END + 1) * 4  # a row per block and listed call, none dropped
    assert table.schema.field("output_balance").type == pa.decimal128(38, 0)
    assert table.schema.field("output_0").type == pa.string()
    rows = {(r["block_number"], r["call_index"]): r for r in table.to_pylist()}
    assert len(rows) == table.num_rows
    decoded = {"balanceOf": 0, "name": 0, "too short": 0, "offset": 0, "reverted": 0}
    for (n, i), row in rows.items():
        answer = raw[(n, i)]
        output = bytes.fromhex(answer["result"][2:]) if "result" in answer else None
        assert row["function"] == ["balanceOf(address)", "name()", "decimals()", "fail(uint256)"][i]
        if i == 0:
            assert "0x" + row["owner"].hex() == holder.lower()
        if "error" in answer:  # reverted (Nest's fail once deployed): the error kept, no outputs, no decode error
            assert i == 3
            assert row["error"] is not None
            assert row["output"] == bytes.fromhex(answer["error"]["data"][2:])  # the revert data
            assert (row["revert_reason"], row["output_r"], row["decode_error"]) == ("Nest: fail", None, None)
            decoded["reverted"] += 1
            continue
        assert row["error"] is None
        assert row["output"] == output
        if not output:  # no code yet at that block: eth_call answers 0x
            assert row["decode_error"].startswith("output: ")
            decoded["too short"] += 1
        elif i == 0:
            assert int(row["output_balance"]) == abi_decode(["uint256"], output)[0]
            decoded["balanceOf"] += 1
        elif i == 1:
            assert row["output_0"] == abi_decode(["string"], output)[0]
            decoded["name"] += 1
        else:  # the uint8 as a string: eth-abi refuses it too, the row keeps why
            assert i == 2
            with pytest.raises(Exception):  # noqa: B017, PT011 (eth-abi's own error types)
                abi_decode(["string"], output)
            assert row["output_wrong"] is None
            assert row["decode_error"].startswith("output: ")
            decoded["offset"] += 1
    assert min(decoded["balanceOf"], decoded["name"], decoded["offset"], decoded["reverted"]) >= END - 3
    assert decoded["too short"] >= 4  # block 0, before the token and Nest are deployed
    assert abi_decode(["uint256"], bytes.fromhex(raw[(END, 0)]["result"][2:]))[0] > 0  # the holder has tokens


def test_returns_are_checked_before_any_request(tmp_path: Any) -> None:
    nowhere = "http://127.0.0.1:9"
    with pytest.raises(InputError, match="share the selector 0x42966c68"):
        cf.extract("eth_calls", blocks="0:1", rpc=nowhere, out=tmp_path, calls=[{"to": "0x" + "11" * 20}],
                   function=["burn(uint256) returns (uint256)", "collate_propagate_storage(bytes16)"])  # fmt: skip
    with pytest.raises(InputError, match="unbalanced parentheses after returns"):
        cf.extract("eth_calls", blocks="0:1", rpc=nowhere, out=tmp_path, calls=[{"to": "0x" + "11" * 20}],
                   function="a() returns (uint256")  # fmt: skip
