"""A batch answer cut into its envelopes, each one's id and where its text lies, without parsing the results.

The engine shares one answer per call between the datasets of a run that verifies: each dataset finds its call's
envelope by id and reads that slice. Parsing the whole batch with ``json.loads`` would build every result's dict tree
in Python only to find the ids; ``_envelopes.split`` (C, the GIL released) validates the JSON and notes the spans in
one pass. Where it is not built, or ``CHAINFRAME_NATIVE`` is 0, the same answer comes from ``json``.

Both answer None for anything but a JSON array of objects, each with exactly one top-level ``"id"`` member holding a
non-negative integer (``-0`` reads as 0, as in ``json``), and nothing after the array but whitespace. They differ
only where ``json`` has limits of its own: the Python path refuses nesting deeper than the interpreter's recursion
limit (about a thousand levels), which C accepts. Neither checks that bytes past 0x7f are UTF-8: whoever parses a
span decodes it.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, NoReturn

try:
    from chainframe.rpc import _envelopes as _built
except ImportError:  # not built: cut in Python
    _built = None
_envelopes: Any = _built  # the C extension has no stubs

Envelope = tuple[int, int, int]
"""An envelope's id, and the start and end of its object text in the answer (``body[start:end]``)."""

_SPACE = re.compile(r"[ \t\n\r]*")  # json's whitespace, and only it


def _refuse_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")  # json reads NaN and Infinity by default; the C cut refuses them


# Pairs, not dicts: a duplicated "id" would otherwise vanish into the last one's value.
_DECODER = json.JSONDecoder(object_pairs_hook=list, parse_constant=_refuse_constant)


def _skip_space(text: str, at: int) -> int:
    space = _SPACE.match(text, at)
    return space.end() if space is not None else at  # a pattern of * always matches


def split_answers(body: bytes) -> list[Envelope] | None:
    """``(id, start, end)`` for each envelope of a batch answer, in the answer's order; None when ``body`` is not a
    JSON array of objects each holding one non-negative integer ``"id"`` at its top level. Never raises for a bad
    body. Cut in C without the GIL where it is built (and ``CHAINFRAME_NATIVE`` is not 0)."""
    if _envelopes is not None and os.environ.get("CHAINFRAME_NATIVE", "1") != "0":
        cut: list[Envelope] | None = _envelopes.split(body)
        return cut
    return python_split_answers(body)


def python_split_answers(body: bytes) -> list[Envelope] | None:
    """:func:`split_answers` with ``json`` alone: the fallback, and what the tests hold the C cut to."""
    text = bytes(body).decode("latin-1")  # one character per byte, so json's offsets are the body's
    at = _skip_space(text, 0)
    if text[at : at + 1] != "[":
        return None
    at = _skip_space(text, at + 1)
    envelopes: list[Envelope] = []
    if text[at : at + 1] == "]":
        at += 1
    else:
        while True:
            if text[at : at + 1] != "{":
                return None
            try:
                pairs, end = _DECODER.raw_decode(text, at)
            except (ValueError, RecursionError):
                return None
            ids: list[Any] = [value for key, value in pairs if key == "id"]
            if len(ids) != 1 or type(ids[0]) is not int or ids[0] < 0:  # bool is an int, and no id
                return None
            envelopes.append((ids[0], at, end))
            at = _skip_space(text, end)
            following = text[at : at + 1]
            at = _skip_space(text, at + 1)
            if following == "]":
                break
            if following != ",":
                return None
    return envelopes if _skip_space(text, at) == len(text) else None
