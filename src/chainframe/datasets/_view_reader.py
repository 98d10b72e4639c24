"""A block's view calls read by one eth_call: the ERC-20 views' many small calls (a balanceOf per token and holder)
in one call a block, as the node would answer each alone.

A node pays most of an eth_call at an old block in finding that block's state, once a call: on the benchmark chain's
anvil a call costs 2-3.5 ms however little it runs. So a block's calls go as one: a state override puts
:func:`reader` code at the zero address, and the eth_call goes from it to it, so each view is called with the zero
address as ``msg.sender`` and ``tx.origin``, as a call without ``from`` is. Each view runs by STATICCALL with its own
gas, so none can change what the next one reads, and the reader answers a mark word, then for each call its
success, the gas it used, its answer's size and the answer.

A call that reverted with gas left reverts alone too (the ERC-20 views keep it as null). A call the reader could
not answer as a call alone would (it ran out of its gas, or halted another way, as a write under STATICCALL does;
or its answer is longer than the room kept) is asked alone, as are all of a block's calls where the reader's
answer is not its own (no mark, another length: a node that ignores state overrides, a chain before Byzantium's
STATICCALL). What differs from a call alone: the zero address has code while the views run, and each has 500,000
gas, not the node's cap.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from chainframe.datasets._calls import answered, call_answers
from chainframe.datasets._dataset import BlockRange
from chainframe.rpc import RPCError, StateUnavailable, TransientError

READER_AT = "0x" + "00" * 20
"""Where the reader is put, and the call's sender: the zero address, a call's sender where it names none."""
MARK = "7ead" * 16
"""The reader's first word: a node that did not put the reader at the address answers without it."""
VIEW_GAS = 500_000
"""Each view's gas. A view that needs more fails in the reader and is asked alone."""
VIEWS_PER_CALL = 24
"""Views one reader calls: about 12.1M gas asked at most, under EIP-7825's 16.7M a transaction."""


def reader(calls: Sequence[Mapping[str, Any]], room: int) -> str:
    """Code that, called by itself (the eth_call from and to its address), answers :data:`MARK`, then for each call
    (its ``to`` and ``data``) a word of STATICCALL's success, a word of the gas it used (with a few of the reader's
    own), a word of the answer's size and ``room`` bytes holding the answer where it fits (else nothing is copied).
    Called by another (a view that calls back its caller), it stops and answers nothing, as an account without code
    does."""
    inputs = [bytes.fromhex(str(call.get("data") or call.get("input") or "0x")[2:]) for call in calls]
    width = 96 + room
    scratch = 32 + width * len(calls)  # where each call's input is copied, past the answers
    # Called by anyone but itself (a view calling back its caller): STOP, as the zero address, which has no code,
    # would answer. CALLER ADDRESS EQ PUSH1 7 JUMPI STOP JUMPDEST; then mem[0] = mark
    code = bytearray(b"\x33\x30\x14\x60\x07\x57\x00\x5b")
    code += b"\x7f" + bytes.fromhex(MARK) + b"\x60\x00\x52"
    data_at: list[int] = []  # where each input's offset goes in the code (patched once the code's end is known)
    for i, (call, data) in enumerate(zip(calls, inputs, strict=True)):
        out = 32 + width * i
        data_at.append(len(code) + 4)
        # CODECOPY(scratch, input's place in the code, size): PUSH2 size, PUSH2 place, PUSH2 scratch
        code += b"\x61" + len(data).to_bytes(2, "big") + b"\x61\x00\x00\x61" + scratch.to_bytes(2, "big") + b"\x39"
        # GAS [g0]; STATICCALL(gas, to, scratch, size, 0, 0): PUSH1 0, PUSH1 0, PUSH2 size, PUSH2 scratch, PUSH20 to,
        # PUSH3 gas [g0 ok]; mem[out] = ok [g0]; mem[out + 32] = g0 - GAS: the gas the view used, and some
        code += b"\x5a\x60\x00\x60\x00\x61" + len(data).to_bytes(2, "big") + b"\x61" + scratch.to_bytes(2, "big")
        code += b"\x73" + bytes.fromhex(str(call["to"])[2:]) + b"\x62" + VIEW_GAS.to_bytes(3, "big") + b"\xfa"
        code += b"\x61" + out.to_bytes(2, "big") + b"\x52"
        code += b"\x5a\x90\x03\x61" + (out + 32).to_bytes(2, "big") + b"\x52"
        code += b"\x3d\x61" + (out + 64).to_bytes(2, "big") + b"\x52"  # mem[out + 64] = RETURNDATASIZE
        # if RETURNDATASIZE > room: skip; else RETURNDATACOPY(out + 96, 0, RETURNDATASIZE)
        code += b"\x61" + room.to_bytes(2, "big") + b"\x3d\x11\x61"
        skip_at = len(code)
        code += b"\x00\x00\x57\x3d\x60\x00\x61" + (out + 96).to_bytes(2, "big") + b"\x3e"
        code[skip_at : skip_at + 2] = len(code).to_bytes(2, "big")
        code += b"\x5b"  # JUMPDEST
    code += b"\x61" + (32 + width * len(calls)).to_bytes(2, "big") + b"\x60\x00\xf3"  # RETURN(0, answers)
    for place, data in zip(data_at, inputs, strict=True):
        code[place : place + 2] = len(code).to_bytes(2, "big")
        code += data
    return "0x" + code.hex()


def _read(answer: Any, calls: int, room: int) -> list[Any] | None:
    """The reader's answer as each call's answer: its output hex, ``{"message": "reverted", "data"}`` for a call
    that reverted with gas left (a call alone reverts too), or None for a call to ask alone (it ran out of its gas,
    or broke a rule a call alone may not, or its answer is longer than the room). None where the answer is not the
    reader's (no mark, another length, not hex)."""
    width = 96 + room
    if not isinstance(answer, str) or len(answer) != 2 + 2 * (32 + width * calls) or answer[2:66] != MARK:
        return None
    try:
        raw = bytes.fromhex(answer[2:])
    except ValueError:
        return None
    out: list[Any] = []
    for i in range(calls):
        at = 32 + width * i
        success, used, size = (int.from_bytes(raw[at + j : at + j + 32], "big") for j in (0, 32, 64))
        output = "0x" + raw[at + 96 : at + 96 + size].hex() if size <= room else None
        if output is None or (success != 1 and used >= VIEW_GAS * 9 // 10):
            out.append(None)
        else:
            out.append(output if success == 1 else {"message": "reverted", "code": None, "data": output})
    return out


async def view_answers(
    client: Any, calls: Sequence[Mapping[str, Any]], blocks: BlockRange, *, room: int = 32
) -> list[Any]:
    """Each call at each block (block-major), as :func:`call_answers` gives them, read a block at a time by
    :func:`reader` calls with ``room`` bytes for each answer; each call it could not answer asked alone."""
    if not calls or any(str(call["to"]).lower() == READER_AT for call in calls):
        return await call_answers(client, calls, blocks)
    groups = [calls[i : i + VIEWS_PER_CALL] for i in range(0, len(calls), VIEWS_PER_CALL)]
    numbers = list(blocks)
    readers = [(_reader_call(len(group)), {READER_AT: {"code": reader(group, room)}}) for group in groups]  # once
    requests = [("eth_call", [call, hex(n), override]) for n in numbers for call, override in readers]
    try:  # the first alone: a node that refuses it, or does not put the reader there, has each call asked alone
        first = (await answered(client, requests[:1]))[0]
    except (StateUnavailable, TransientError):
        raise
    except RPCError:
        first = None
    if _read(first, len(groups[0]), room) is None:
        return await call_answers(client, calls, blocks)
    said = [first, *(await answered(client, requests[1:]))]
    out: list[Any] = []
    for i, answer in enumerate(said):
        group = groups[i % len(groups)]
        read = _read(answer, len(group), room)
        out += read if read is not None else [None] * len(group)
    alone = [i for i, answer in enumerate(out) if answer is None]
    if alone:
        width = len(calls)
        asked = [("eth_call", [dict(calls[i % width]), hex(numbers[i // width])]) for i in alone]
        for i, answer in zip(alone, await answered(client, asked), strict=True):
            out[i] = answer
    return out


def reader_calls(views: int) -> int:
    """The reader calls a block's ``views`` take (``--dry``)."""
    return -(-views // VIEWS_PER_CALL)


def _reader_call(views: int) -> dict[str, str]:
    gas = 100_000 + (VIEW_GAS + 5_000) * views
    return {"from": READER_AT, "to": READER_AT, "gas": hex(gas), "gasPrice": "0x0"}
