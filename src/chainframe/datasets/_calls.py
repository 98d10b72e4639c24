"""eth_call at each block: the ``eth_calls`` dataset, and the batching the ERC-20 views share with it.

A call that reverts, or fails in the EVM in another way (out of gas, an invalid opcode, a sender who cannot pay), is
an answer about the chain at that block, so it is kept: a row with the node's message, code and revert data. An error
that says nothing about the call (a rate limit, a block the node does not have, state it has pruned, a method it does
not serve) still raises, so a node without the history never passes for a chain full of failed calls.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from chainframe.datasets._columns import COLUMNS, U256
from chainframe.datasets._convert import convert
from chainframe.datasets._dataset import BlockRange, Dataset, RowChecks, build_arrow
from chainframe.datasets._function_calls import FUNCTION, DecodesCalls
from chainframe.datasets._inputs import CALLS
from chainframe.rpc import ServerError, params

CALLED = "the output of a call executed by the node: no block header commits to it (only to the state it ran on)"
"""Why no column of an eth_call dataset is provable (a header's state root proves storage, not execution)."""

# A state the node cannot serve at that block: never a fact about the call, whatever code it comes with.
_NO_STATE = re.compile(
    r"header not found|missing trie node|unknown block|block not found|not found|pruned|historical state|"
    r"state (is )?not available|state unavailable|archive|out of range",
    re.IGNORECASE,
)
# The EVM (or the call's own gas, value and sender) ended the call: geth, erigon, nethermind, besu, reth and anvil.
_EXECUTION = re.compile(
    r"revert|out of gas|gas too (low|high)|intrinsic gas|gas required exceeds|invalid opcode|opcode|"
    r"stack (over|under)flow|stack limit|invalid jump|write protection|static ?call|call depth|max code size|"
    r"insufficient (funds|balance)|precompile|invalid (fe )?instruction|evm error|execution",
    re.IGNORECASE,
)


def execution_error(error: Exception) -> bool:
    """Whether an eth_call's error is the call's own outcome at that block (kept as a row), not the node's trouble."""
    if type(error) is not ServerError:  # limits, rate limits, missing methods, bad parameters: raised
        return False
    message = str(getattr(error, "detail", error))
    if _NO_STATE.search(message):
        return False
    return getattr(error, "code", None) == 3 or _EXECUTION.search(message) is not None


async def call_answers(client: Any, calls: Sequence[Mapping[str, Any]], blocks: BlockRange) -> list[Any]:
    """Each call at each block (block-major), batched: the output hex, or ``{"message", "code", "data"}`` for a call
    the EVM ended; any other error raises."""
    return await answered(client, [("eth_call", [dict(call), hex(n)]) for n in blocks for call in calls])


async def answered(client: Any, requests: Sequence[tuple[str, list[Any]]]) -> list[Any]:
    """eth_call ``requests``, batched: each output hex, or ``{"message", "code", "data"}`` for a call the EVM ended;
    any other error raises."""
    answers = await client.batch(requests) if requests else []
    out: list[Any] = []
    for answer in answers:
        if isinstance(answer, Exception):
            if not execution_error(answer):
                raise answer
            code = getattr(answer, "code", None)
            data = getattr(answer, "data", None)
            out.append({"message": str(getattr(answer, "detail", answer)), "code": code, "data": data})
        else:
            out.append(answer)
    return out


def revert_reason(data: bytes | None) -> str | None:
    """The reason of ``Error(string)`` revert data, or ``Panic(0x..)`` for a Solidity panic; None for anything else."""
    if data is None or len(data) < 4:
        return None
    if data[:4] == bytes.fromhex("4e487b71") and len(data) >= 36:  # Panic(uint256)
        return f"Panic({hex(int.from_bytes(data[4:36], 'big'))})"
    if data[:4] == bytes.fromhex("08c379a0"):  # Error(string)
        return abi_string(data[4:])
    return None


def abi_string(output: bytes) -> str | None:
    """An ABI-encoded ``string`` (offset, length, bytes) as text; None if it is not one, or not UTF-8."""
    if len(output) < 64:
        return None
    offset = int.from_bytes(output[:32], "big")
    if offset > len(output) - 32:
        return None
    length = int.from_bytes(output[offset : offset + 32], "big")
    if length > len(output) - offset - 32:
        return None
    try:
        return output[offset + 32 : offset + 32 + length].decode()
    except UnicodeDecodeError:
        return None


def hex_bytes(value: Any) -> bytes | None:
    """0x hex as bytes; None for anything else (a node may put text in an error's data)."""
    if not isinstance(value, str) or not value.startswith("0x") or len(value) % 2:
        return None
    try:
        return bytes.fromhex(value[2:])
    except ValueError:
        return None


class EthCalls(DecodesCalls, Dataset):
    name = "eth_calls"
    doc = (
        "eth_call at each block, for each call asked: the output, or the error the EVM ended it with (a revert is "
        "a row, with its message, code, revert data and reason). With function=: the calls of those functions, "
        "their arguments and outputs (returns (...)) decoded into typed columns."
    )
    columns = ("chain_id", "block_number", "call_index", "from_address", "to_address", "input", "output", "error",
               "error_code", "revert_reason")  # fmt: skip
    sort = ("block_number", "call_index")
    fetched_with = "eth_call, per block and call (batched)"
    method = "eth_call"
    reads_state = True
    chunk_size = 100
    inputs = (CALLS, FUNCTION)
    needs = frozenset({"calls"})
    per_block = "calls"
    decodes_outputs = "always"
    row_checks = RowChecks(keys=("block_number", "call_index", "to_address"))
    unprovable = dict.fromkeys(columns, CALLED)

    async def fetch(self, client: Any, blocks: BlockRange, **filters: Any) -> list[bytes]:
        calls = params.call_list(filters.get("calls"))
        answers = await call_answers(client, calls, blocks)
        return [json.dumps({"blocks": list(blocks), "calls": calls, "answers": answers}).encode()]

    def transform(self, bodies: Sequence[bytes], *, chain_id: int, u256: U256 = "decimal") -> pa.Table:
        rows: dict[str, list[Any]] = {c: [] for c in self.columns if c != "chain_id"}
        for body in bodies:
            piece = json.loads(body)
            calls, answers = piece["calls"], iter(piece["answers"])
            for number in piece["blocks"]:
                for i, call in enumerate(calls):
                    answer = next(answers)
                    failed = isinstance(answer, dict)
                    output = answer.get("data") if failed else answer
                    rows["block_number"].append(number)
                    rows["call_index"].append(i)
                    rows["from_address"].append(call.get("from"))
                    rows["to_address"].append(call["to"])
                    rows["input"].append(call.get("data", call.get("input", "0x")))
                    rows["output"].append(output if hex_bytes(output) is not None else None)
                    rows["error"].append(answer["message"] if failed else None)
                    rows["error_code"].append(answer.get("code") if failed else None)
                    rows["revert_reason"].append(revert_reason(hex_bytes(output)) if failed else None)
        arrays = {
            column: convert(pa.array(values, pa.string()), COLUMNS[column].kind, column)
            if COLUMNS[column].kind in ("address", "data")
            else pa.array(values, COLUMNS[column].arrow_type)
            for column, values in rows.items()
        }
        return build_arrow(arrays, self.columns, len(rows["block_number"]), chain_id=chain_id, u256=u256)


ETH_CALLS = EthCalls()
