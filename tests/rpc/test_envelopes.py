"""The client's check that a batch answer is plainly complete and error-free (``plainly_complete``): counted in C
without the GIL (``chainframe.rpc._envelopes``), it must say what the Python scans say, on recorded answers batched
as a node sends them, with errors and missing envelopes among them, and on random damage."""

from __future__ import annotations

import importlib.util
import json
import random

import pytest

from chainframe.rpc._client import plainly_complete
from tests.fixtures import recorded_responses


def _python(raw: bytes, calls: int) -> bool:
    return raw[:1] == b"[" and b'"error"' not in raw and raw.count(b'"jsonrpc"') == calls


def _batches() -> list[tuple[bytes, int]]:
    rng = random.Random(5)
    results = [r.result for r in recorded_responses() if r.error is None][:300]
    out = []
    for _ in range(200):
        items = [{"jsonrpc": "2.0", "id": i, "result": rng.choice(results)} for i in range(rng.randint(1, 8))]
        calls = len(items)
        match rng.randrange(3):  # else whole and error-free
            case 0:  # an error among the answers
                items[rng.randrange(calls)] = {"jsonrpc": "2.0", "id": 0, "error": {"code": -32000, "message": "x"}}
            case 1:  # an answer left out
                items.pop(rng.randrange(calls))
        spacing = (",", ":") if rng.random() < 0.5 else (", ", ": ")  # as different nodes write it
        text = json.dumps(items, separators=spacing).encode()
        out.append((text, calls))
    return out


def test_the_envelope_counter_is_built() -> None:
    """An install whose C part did not compile counts in Python: correct, but this would not be tested."""
    assert importlib.util.find_spec("chainframe.rpc._envelopes") is not None


@pytest.mark.parametrize(("raw", "calls"), _batches())
def test_the_counted_check_says_what_the_python_scans_say(raw: bytes, calls: int) -> None:
    assert plainly_complete(raw, calls) is _python(raw, calls)


@pytest.mark.parametrize(
    ("raw", "calls", "plain"),
    [
        (b'[{"jsonrpc":"2.0","id":1,"result":"0x1"}]', 1, True),
        (b'[{"jsonrpc":"2.0","id":1,"result":"0x1"}]', 2, False),
        (b'{"jsonrpc":"2.0","id":1,"result":"0x1"}', 1, False),
        (b'[{"jsonrpc":"2.0","id":1,"error":{"code":1}}]', 1, False),
        (b'[{"jsonrpc":"2.0","id":1,"result":{"error":"reverted"}}]', 1, False),  # a trace's error field: the slow path
        (b"[]", 0, True),
        (b"", 0, False),
    ],
)
def test_edge_cases(raw: bytes, calls: int, plain: bool) -> None:
    assert plainly_complete(raw, calls) is plain is _python(raw, calls)


def test_random_damage(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(9)
    for raw, calls in _batches():
        damaged = bytearray(raw)
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(damaged) + 1)
            damaged[at:at] = rng.choice([b'"jsonrpc"', b'"error"', b'"jsonrp', b'error"', b'""'])
        assert plainly_complete(bytes(damaged), calls) is _python(bytes(damaged), calls)
    monkeypatch.setenv("CHAINFRAME_NATIVE", "0")
    assert plainly_complete(b'[{"jsonrpc":"2.0","id":1,"result":1}]', 1)


def test_every_offset_across_the_searchs_64_byte_blocks() -> None:
    """The C search reads 64 bytes at a time (chainframe/_find_pair.h): a string starting anywhere, one cut short at
    the end, and one overlapping another, counted as bytes.count and ``in`` do."""
    for needle in (b'"error"', b'"jsonrpc"', b'"jsonrpc"jsonrpc"', b'"jsonrpc"error"', b'"jsonrp', b'"e', b'"j'):
        for at in range(150):
            for length in (at + len(needle), at + len(needle) + 1, 200):
                raw = bytearray(b"[" + b"x" * (length - 1))
                raw[at + 1 : at + 1 + len(needle)] = needle
                raw = raw[: max(length, 1)]
                for calls in (0, 1, 2):
                    assert plainly_complete(bytes(raw), calls) is _python(bytes(raw), calls), (needle, at, length)


def test_errors_inside_results_are_handed_on_and_error_envelopes_are_not() -> None:
    """A trace_block answer holds an "error" member in every reverted frame: its batch is still one success envelope
    per call (``results_only``), so it is not asked again item by item; an error envelope, a missing or foreign id, or
    an answer that is not JSON is."""
    from chainframe.rpc._client import results_only

    frame = {"action": {"callType": "call"}, "error": "Reverted", "result": None, "traceAddress": []}
    ok = [{"jsonrpc": "2.0", "id": i, "result": [frame] if i % 2 else []} for i in (7, 8, 9)]
    for spacing in ((",", ":"), (", ", ": ")):
        raw = json.dumps(ok, separators=spacing).encode()
        assert not plainly_complete(raw, 3)
        assert results_only(raw, [7, 8, 9])
        assert results_only(raw, [9, 8, 7])
        assert not results_only(raw, [7, 8])
        assert not results_only(raw, [7, 8, 10])
        assert not results_only(raw[:-1], [7, 8, 9])
        failed = [*ok[:2], {"jsonrpc": "2.0", "id": 9, "error": {"code": -32000, "message": "result"}}]
        assert not results_only(json.dumps(failed, separators=spacing).encode(), [7, 8, 9])
