"""Differential fuzzing of the native scanner against the pure path: real answers, damaged byte by byte.

Shared by ``tests/datasets/test_native.py`` (a few thousand seeded cases in the default run) and
``benchmarks/fuzz_native.py`` (as many as asked, on devnet answers too). Each case is decoded twice, by
``dataset.transform`` with the scanner and with ``CHAINFRAME_NATIVE=0``; the scanner may decline (the pure path then
decides) but must never take an answer the pure path refuses, nor give another table; and a refused answer raises
DecodeError on both paths, never another error.
"""

from __future__ import annotations

import os
import random
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal

import pyarrow as pa

from chainframe.datasets import DecodeError
from chainframe.datasets._columns import U256
from chainframe.datasets._objects import ObjectDataset

CHAIN_ID = 1
KEY = re.compile(rb'"([A-Za-z]+)"\s*:')

Outcome = Literal[
    "both accept, equal",
    "native declines, pure accepts",
    "native declines, pure refuses",
    "native accepts, pure refuses",
    "both accept, differ",
    "a path raises another error",
]
WRONG: frozenset[Outcome] = frozenset(
    {"native accepts, pure refuses", "both accept, differ", "a path raises another error"}
)


def _garble_key(rng: random.Random, body: bytes) -> bytes:
    """A key's name changed: a letter, a control character or a byte that is not UTF-8 in it, or a space after it."""
    keys = list(KEY.finditer(body))
    if not keys:
        return body
    key = rng.choice(keys)
    start, end = key.span(1)
    at = rng.randrange(start, end + 1)
    junk = rng.choice(
        [bytes([rng.randrange(32)]), bytes([rng.randrange(0x80, 0x100)]), b" \n\t", b" ", b"X", b"\xc3\xa9", b"\\n"]
    )
    if rng.random() < 0.5 and at < end:
        return body[:at] + junk + body[at + 1 :]  # in place of a letter
    return body[:at] + junk + body[at:]


def mutate(rng: random.Random, body: bytes) -> bytes:
    """One to three kinds of damage: bytes flipped, cut, dropped or doubled; control characters, bytes that are not
    UTF-8, escapes and well-formed UTF-8 put in; a key garbled."""
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        if not body:
            return body
        at = rng.randrange(len(body))
        match rng.randrange(10):
            case 0:
                body = body[:at]
            case 1:
                body = body[:at] + body[at + 1 :]
            case 2:
                body = body[:at] + body[at : at + 1] * 2 + body[at + 1 :]
            case 3:
                body = body[:at] + bytes([body[at] ^ (1 << rng.randrange(8))]) + body[at + 1 :]
            case 4:
                body = body[:at] + bytes([rng.choice(b'0123456789abcdefx"{}[],: n\\')]) + body[at + 1 :]
            case 5:
                body = body[:at] + bytes([rng.randrange(32)]) + body[at:]
            case 6:
                bad = [b"\x80", b"\xaf", b"\xc0\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x82", b"\xff"]
                body = body[:at] + rng.choice(bad) + body[at:]
            case 7:
                good = [b"\xc3\xa9", b"\xe2\x82\xac", b"\xf0\x9f\x98\x80", b"\x7f"]
                body = body[:at] + rng.choice(good) + body[at:]
            case 8:
                escapes = [b"\\n", b"\\u0041", b"\\ud800", b"\\q", b"\\u12", b"\\", b'\\"']
                body = body[:at] + rng.choice(escapes) + body[at:]
            case _:
                body = _garble_key(rng, body)
    return body


@contextmanager
def pure_path() -> Iterator[None]:
    """``CHAINFRAME_NATIVE=0`` for the block (the scanner declines everything)."""
    before = os.environ.get("CHAINFRAME_NATIVE")
    os.environ["CHAINFRAME_NATIVE"] = "0"
    try:
        yield
    finally:
        if before is None:
            del os.environ["CHAINFRAME_NATIVE"]
        else:
            os.environ["CHAINFRAME_NATIVE"] = before


def outcome(dataset: ObjectDataset, body: bytes, u256: U256) -> Outcome:
    """How the scanner and the pure path took ``body``. An error the pure path's helpers raise on the scanned arrays
    counts as the scanner declining: it gives no table. An error that is not a DecodeError, on either path, is a
    crash: a refused answer must raise DecodeError."""
    try:
        scanned = dataset.scanned([body], chain_id=CHAIN_ID, u256=u256)
    except DecodeError:
        scanned = None
    except Exception:
        return "a path raises another error"
    with pure_path():
        try:
            expected: pa.Table | None = dataset.transform([body], chain_id=CHAIN_ID, u256=u256)
        except DecodeError:
            expected = None
        except Exception:
            return "a path raises another error"
    if scanned is None:
        return "native declines, pure refuses" if expected is None else "native declines, pure accepts"
    if expected is None:
        return "native accepts, pure refuses"
    return "both accept, equal" if scanned.equals(expected) else "both accept, differ"


@dataclass
class Report:
    """The outcomes of a run, in all and per dataset, and the first wrong cases (dataset, u256, body) to show."""

    counts: Counter[Outcome] = field(default_factory=Counter)
    by_dataset: dict[str, Counter[Outcome]] = field(default_factory=dict)
    wrong: list[tuple[str, U256, bytes]] = field(default_factory=list)

    @property
    def wrong_count(self) -> int:
        return sum(self.counts[o] for o in WRONG)

    def summary(self, dataset: str | None = None) -> str:
        counts = self.counts if dataset is None else self.by_dataset[dataset]
        total = counts.total()
        return ", ".join(f"{name}: {n} ({n / total:.1%})" for name, n in counts.most_common())


def run(originals: Sequence[tuple[ObjectDataset, bytes]], cases: int, seed: int) -> Report:
    """``cases`` damaged copies of the ``originals``, each decoded both ways with one of the u256 encodings."""
    rng = random.Random(seed)
    report = Report()
    for _ in range(cases):
        dataset, body = rng.choice(originals)
        damaged = mutate(rng, body)
        u256: U256 = rng.choice(("decimal", "binary"))
        got = outcome(dataset, damaged, u256)
        report.counts[got] += 1
        report.by_dataset.setdefault(dataset.name, Counter())[got] += 1
        if got in WRONG and len(report.wrong) < 20:
            report.wrong.append((dataset.name, u256, damaged))
    return report
