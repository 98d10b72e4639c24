"""A batch answer cut into its envelopes (``split_answers``): the C cut (``chainframe.rpc._envelopes.split``) must
give what the ``json`` twin gives, on recorded results batched as a node sends them, on strings that look like
structure, on every malformed shape, and on thousands of randomly damaged answers; and each span it reports must
parse, alone, to an object whose id is the one reported."""

from __future__ import annotations

import importlib.util
import json
import random
from typing import Any

import pytest

from chainframe.rpc._split import _envelopes, python_split_answers, split_answers
from tests.fixtures import recorded_responses

TRICKY: list[Any] = [
    '}{"][',
    'a"}',
    "\\",
    '\\"}]',
    "\u00e9\u4e2d\U0001f600",
    "\u0000\u001f\n\t",
    {"id": 99, "nested": {"id": "x", "list": [{"id": 5}]}},
    [[[[{"a": []}]]], {}, []],
    "0x" + "ab" * 40,
    -1.5e-7,
    None,
    True,
    12345678901234567890123,
]


def _split(body: bytes) -> list[tuple[int, int, int]] | None:
    """The C cut and the twin, held to each other, and each span to json."""
    cut: list[tuple[int, int, int]] | None = _envelopes.split(body)
    assert cut == python_split_answers(body), body
    for id_, start, end in cut or ():
        envelope = json.loads(body[start:end].decode("latin-1"))  # neither cut checks UTF-8; json would
        assert isinstance(envelope, dict)
        assert envelope["id"] == id_
    return cut


def _batch(rng: random.Random, results: list[Any], ascii_only: bool = True) -> tuple[bytes, list[int]]:
    ids = rng.sample(range(10**6), rng.randint(1, 8))
    items = []
    for id_ in ids:
        item = {"jsonrpc": "2.0", "id": id_, "result": rng.choice(results)}
        if rng.random() < 0.3:
            item = dict(reversed(list(item.items())))  # id last, after a result holding ids of its own
        items.append(item)
    spacing = (",", ":") if rng.random() < 0.5 else (", ", ": ")  # as different nodes write it
    text = json.dumps(items, separators=spacing, ensure_ascii=ascii_only, indent=rng.choice([None, None, 1]))
    return text.encode(), ids


def _results() -> list[Any]:
    return [r.result for r in recorded_responses() if r.error is None][:200] + TRICKY


def test_the_cut_is_built() -> None:
    """An install whose C part did not compile cuts in Python: correct, but this would not be tested."""
    assert importlib.util.find_spec("chainframe.rpc._envelopes") is not None


def test_recorded_results_batched() -> None:
    rng = random.Random(3)
    results = _results()
    for _ in range(150):
        body, ids = _batch(rng, results, ascii_only=rng.random() < 0.5)
        cut = _split(body)
        assert cut is not None
        assert [id_ for id_, _, _ in cut] == ids
        assert [json.loads(body[start:end]) for _, start, end in cut] == json.loads(body)


def test_strings_that_look_like_structure() -> None:
    body = b'[{"result":"a\\"}]","id":7,"x":{"id":8,"s":"\\\\"}},{"id":0,"result":["{[\\u0022"]}]'
    between = body.index(b"}},{") + 2
    assert _split(body) == [(7, 1, between), (0, between + 1, len(body) - 1)]


@pytest.mark.parametrize(
    ("body", "ids"),
    [
        (b"[]", []),
        (b" \t\r\n[ \t\r\n] \t\r\n", []),
        (b'[{"id":1}]', [1]),
        (b'\n[\n  {\n    "id" : 1\n  } ,\n  {"id":2}\n]\n', [1, 2]),
        (b'[{"id":0},{"id":18446744073709551616999}]', [0, 18446744073709551616999]),
        (b'[{"id":-0}]', [0]),  # json reads -0 as the int 0
        (b'[{"\\u0069d":5}]', [5]),  # an escaped key json reads as "id"
        (b'[{"id":5,"ID":6,"i\\u0064x":7}]', [5]),
        (b'[{"id":5,"result":{"id":6,"id":7}}]', [5]),  # ids below the envelope's top level are the result's
        (b'[{"id":5,"result":NaN}]', None),
        (b'[{"result":1.5e+3,"x":[true,false,null,-0.0,"",{}],"id":3}]', [3]),
    ],
)
def test_well_formed(body: bytes, ids: list[int] | None) -> None:
    cut = _split(body)
    assert (cut if cut is None else [id_ for id_, _, _ in cut]) == ids


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"   ",
        b'{"id":1}',  # a single answer, not a batch
        b'x[{"id":1}]',
        b"[",
        b"[1]",
        b'["x"]',
        b"[[]]",
        b"[null]",
        b'[{"id":1},2]',
        b'[{"id":1},]',  # a trailing comma
        b'[,{"id":1}]',
        b'[{"id":1}{"id":2}]',  # a missing comma
        b'[{"id":1}',  # unbalanced
        b'[{"id":1}}]',
        b'[{"id":1,"r":[}]',
        b'[{"id":1,"r":{]}]',
        b'[{"id":1,"r":[1,2}]]',
        b'[{"id":1,"r":"x}]',  # unterminated string
        b'[{"id":1,"r":"x\\"}]',
        b'[{"id":1,"r":"\\',
        b'[{"id":1,"r":"\\x"}]',  # an escape json does not know
        b'[{"id":1,"r":"\\u12g4"}]',
        b'[{"id":1,"r":"\\u12"}]',
        b'[{"id":1,"r":"a\nb"}]',  # a raw control character in a string
        b"[{}]",  # no id
        b'[{"result":{"id":1}}]',  # only a nested one
        b'[{"id":1,"id":1}]',  # two
        b'[{"id":1,"\\u0069d":2}]',
        b'[{"id":"1"}]',  # not an integer
        b'[{"id":1.0}]',
        b'[{"id":1e2}]',
        b'[{"id":-1}]',
        b'[{"id":-}]',
        b'[{"id":01}]',
        b'[{"id":true}]',
        b'[{"id":null}]',
        b'[{"id":[1]}]',
        b'[{"id":Infinity}]',
        b'[{"id":1}] x',  # after the array
        b'[{"id":1}][]',
        b'[{"id":1}],',
        b'[{"id":1,}]',
        b'[{"id":1 "r":2}]',
        b'[{"id" 1}]',
        b"[{id:1}]",
        b'[{"id":1,"r":tru}]',
        b'[{"id":1,"r":nul',
        b'[{"id":1,"r":1.}]',
        b'[{"id":1,"r":.5}]',
        b'[{"id":1,"r":1e}]',
        b'[{"id":1,"r":+1}]',
        b'[{"id":1,"r":[1,]}]',
        b'\x00[{"id":1}]',
        b'[{"id":1}]\x00',
        b'\xef\xbb\xbf[{"id":1}]',  # a byte order mark
        b'[{"id":10000' + b"0" * 5000 + b"}]",  # past int's digit limit: json refuses it
    ],
)
def test_not_a_batch(body: bytes) -> None:
    assert _split(body) is None


def test_every_cut_short_answer() -> None:
    body, _ = _batch(random.Random(1), TRICKY, ascii_only=False)
    for length in range(len(body)):
        assert _split(body[:length]) is None or body[length:].isspace()


def test_escapes_and_quotes_at_every_offset_of_the_word_skip() -> None:
    """Strings are skipped 8 bytes at a time: a quote, an escape or a control byte at any offset, and a string cut
    short anywhere, must be found as byte by byte."""
    for at in range(20):
        for inner in (b'\\"', b"\\\\", b"\\u0041", b"\x1f", b'"', b"\\"):
            for tail in range(12):
                text = b"x" * at + inner + b"y" * tail
                body = b'[{"id":1,"r":"' + text + b'"}]'
                _split(body)
                _split(body[: 14 + at + len(inner) + tail // 2])


def test_differential_fuzz() -> None:
    """Answers damaged where structure lives (brackets, quotes, escapes, commas, digits), or cut, or spliced: the C
    cut and the twin agree on every one, None or not."""
    rng = random.Random(11)
    results = _results()
    pieces = [b"{", b"}", b"[", b"]", b'"', b"\\", b",", b":", b" ", b"0", b"1", b"-", b".", b"e", b'"id"', b'"id":']
    pieces += [b'"id":2,', b"\\u", b"null", b"\n", b"\x01", b"\xff"]
    accepted = 0
    for _ in range(3000):
        body, _ = _batch(rng, results, ascii_only=rng.random() < 0.8)
        damaged = bytearray(body)
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(damaged) + 1)
            match rng.randrange(4):
                case 0:
                    damaged[at:at] = rng.choice(pieces)
                case 1:
                    del damaged[at : at + rng.randint(1, 3)]
                case 2:
                    damaged[at : at + 1] = rng.choice(pieces)
                case 3:  # a piece of the answer moved elsewhere
                    length = rng.randint(1, 12)
                    damaged[rng.randrange(len(damaged) + 1) : 0] = damaged[at : at + length]
        accepted += _split(bytes(damaged)) is not None
    assert 100 < accepted < 2900  # the damage both breaks answers and leaves some whole


def test_without_the_c_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    body = b'[{"jsonrpc":"2.0","id":4,"result":"0x1"}]'
    assert split_answers(body) == [(4, 1, len(body) - 1)]
    monkeypatch.setenv("CHAINFRAME_NATIVE", "0")
    assert split_answers(body) == [(4, 1, len(body) - 1)]
    assert split_answers(b"[") is None


def test_deep_nesting_is_cut_in_c() -> None:
    """The one known difference: json stops at the interpreter's recursion limit, the C cut does not."""
    body = b'[{"id":1,"r":' + b"[" * 100_000 + b"]" * 100_000 + b"}]"
    assert _envelopes.split(body) == [(1, 1, len(body) - 1)]
    assert python_split_answers(body) is None
