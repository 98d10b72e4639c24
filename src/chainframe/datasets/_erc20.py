"""ERC-20 views read with eth_call at each block: balances (tokens x holders), total supplies, and metadata.

A view a token lacks, or that reverts, is a null value, not an error: many tokens predate parts of the standard
(MKR and SAI answer ``name()`` and ``symbol()`` with a bytes32, some have no ``decimals()``). Amounts are u256 words,
stored by the u256 rule like every amount: decimal128(38, 0), or 32-byte words with ``u256="binary"``; a value the
decimal cannot hold raises, it is never rounded.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import pyarrow as pa

from chainframe.datasets._calls import CALLED, abi_string, hex_bytes
from chainframe.datasets._columns import COLUMNS, U256
from chainframe.datasets._convert import convert
from chainframe.datasets._dataset import BlockRange, Dataset, RowChecks, build_arrow
from chainframe.datasets._inputs import ADDRESSES, TOKENS, Input
from chainframe.datasets._view_reader import VIEWS_PER_CALL, reader_calls, view_answers

if TYPE_CHECKING:
    import polars as pl
else:
    from chainframe._lazy import polars as pl

BALANCE_OF = "0x70a08231"
TOTAL_SUPPLY = "0x18160ddd"
NAME, SYMBOL, DECIMALS = "0x06fdde03", "0x95d89b41", "0x313ce567"
READ_BY_BLOCK = (
    "eth_call per block with a state override putting code at the zero address that STATICCALLs {views}, up to "
    f"{VIEWS_PER_CALL} a call; eth_call of a view alone where that code cannot answer it as a call alone; batched"
)
METADATA_ROOM = 192
"""Bytes kept for each metadata answer read in a block's one call: an ABI string of up to 128 bytes (a longer one is
asked alone)."""


def _unique(values: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(values))


def _words(answers: Sequence[Any], column: str, u256: U256) -> pa.Array:
    """Each answer's first 32-byte word as the column's amount; null for an error or an answer shorter than a word
    (an account without code answers ``0x``). Vectorized: balances are the volume."""
    raw = pl.Series(column, [a if isinstance(a, str) else None for a in answers], dtype=pl.String())
    word = pl.select(pl.when(raw.str.len_bytes() >= 66).then(raw.str.slice(0, 66))).to_series()
    return convert(word.to_arrow(), COLUMNS[column].kind_for(u256), column)


def _addresses(values: Sequence[str], column: str) -> pa.Array:
    return convert(pa.array(values, pa.string()), "address", column)


def _grid(blocks: Sequence[int], *sizes: int) -> tuple[pa.Array, list[pa.Array]]:
    """Block numbers and the index into each of ``sizes`` for every row of a block-major grid (blocks x sizes...)."""
    import numpy as np

    per_block = int(np.prod(sizes)) if sizes else 1
    numbers = pa.array(np.repeat(np.asarray(blocks, dtype=np.uint64), per_block))
    indexes, inner = [], per_block
    for size in sizes:
        inner //= size
        indexes.append(pa.array(np.tile(np.repeat(np.arange(size), inner), len(blocks) * per_block // (size * inner))))
    return numbers, indexes


class _View(Dataset):
    """An ERC-20 view called with eth_call at each block, for each token (and holder) asked."""

    method = "eth_call"
    reads_state = True
    needs = frozenset({"tokens"})
    per_block = "tokens"
    inputs: ClassVar[tuple[Input, ...]] = (TOKENS,)

    def concat(self, tables: Sequence[pa.Table], u256: U256) -> pa.Table:
        tables = [t for t in tables if t.num_rows]
        return pa.concat_tables(tables) if tables else self.empty(u256)


class Erc20Balances(_View):
    name = "erc20_balances"
    doc = "ERC-20 balanceOf(holder) at each block, for each token and holder asked (null where the call fails)."
    columns = ("chain_id", "block_number", "token_address", "address", "balance")
    sort = ("block_number", "token_address", "address")
    fetched_with = READ_BY_BLOCK.format(views="balanceOf(address) of each token and holder")
    chunk_size = 100
    inputs = (TOKENS, ADDRESSES)
    needs = frozenset({"tokens", "addresses"})
    row_checks = RowChecks(keys=("block_number", "token_address", "address"))
    unprovable = dict.fromkeys(columns, CALLED)

    def calls(self, blocks: int, filters: Any) -> int | None:
        return blocks * reader_calls(len(_unique(filters["tokens"])) * len(_unique(filters["addresses"])))

    async def fetch(self, client: Any, blocks: BlockRange, **filters: Any) -> list[bytes]:
        tokens, holders = _unique(filters["tokens"]), _unique(filters["addresses"])
        calls = [{"to": t, "data": BALANCE_OF + "0" * 24 + h[2:]} for t in tokens for h in holders]
        answers = await view_answers(client, calls, blocks)
        body = {"blocks": list(blocks), "tokens": tokens, "holders": holders, "answers": answers}
        return [json.dumps(body).encode()]

    def transform(self, bodies: Sequence[bytes], *, chain_id: int, u256: U256 = "decimal") -> pa.Table:
        tables = []
        for body in map(json.loads, bodies):
            tokens, holders = body["tokens"], body["holders"]
            numbers, (token, holder) = _grid(body["blocks"], len(tokens), len(holders))
            out = {
                "block_number": numbers,
                "token_address": _addresses(tokens, "token_address").take(token),
                "address": _addresses(holders, "address").take(holder),
                "balance": _words(body["answers"], "balance", u256),
            }
            tables.append(build_arrow(out, self.columns, len(numbers), chain_id=chain_id, u256=u256))
        return self.concat(tables, u256)


class Erc20Supplies(_View):
    name = "erc20_supplies"
    doc = "ERC-20 totalSupply() at each block, for each token asked (null where the call fails)."
    columns = ("chain_id", "block_number", "token_address", "total_supply")
    sort = ("block_number", "token_address")
    fetched_with = READ_BY_BLOCK.format(views="totalSupply() of each token")
    chunk_size = 1000
    row_checks = RowChecks(keys=("block_number", "token_address"))
    unprovable = dict.fromkeys(columns, CALLED)

    async def fetch(self, client: Any, blocks: BlockRange, **filters: Any) -> list[bytes]:
        tokens = _unique(filters["tokens"])
        answers = await view_answers(client, [{"to": t, "data": TOTAL_SUPPLY} for t in tokens], blocks)
        return [json.dumps({"blocks": list(blocks), "tokens": tokens, "answers": answers}).encode()]

    def calls(self, blocks: int, filters: Any) -> int | None:
        return blocks * reader_calls(len(_unique(filters["tokens"])))

    def transform(self, bodies: Sequence[bytes], *, chain_id: int, u256: U256 = "decimal") -> pa.Table:
        tables = []
        for body in map(json.loads, bodies):
            numbers, (token,) = _grid(body["blocks"], len(body["tokens"]))
            out = {
                "block_number": numbers,
                "token_address": _addresses(body["tokens"], "token_address").take(token),
                "total_supply": _words(body["answers"], "total_supply", u256),
            }
            tables.append(build_arrow(out, self.columns, len(numbers), chain_id=chain_id, u256=u256))
        return self.concat(tables, u256)


def text_view(output: bytes | None) -> str | None:
    """``name()`` or ``symbol()``'s answer as text: an ABI string, or a bytes32 holding right-padded text (MKR,
    SAI); None for no answer, or one that is neither (or not UTF-8)."""
    if output is None:
        return None
    if len(output) == 32:
        try:
            return output.rstrip(b"\0").decode()
        except UnicodeDecodeError:
            return None
    return abi_string(output)


def decimals_view(output: bytes | None) -> int | None:
    """``decimals()``'s answer: its first word, when it fits the uint8 the standard declares; else None."""
    if output is None or len(output) < 32:
        return None
    value = int.from_bytes(output[:32], "big")
    return value if value < 256 else None


class Erc20Metadata(_View):
    name = "erc20_metadata"
    doc = (
        "ERC-20 name(), symbol() and decimals() at each block, for each token asked: a bytes32 name or symbol (MKR, "
        "SAI) read as its text; a view the token lacks or that fails is null."
    )
    columns = ("chain_id", "block_number", "token_address", "name", "symbol", "decimals")
    sort = ("block_number", "token_address")
    fetched_with = READ_BY_BLOCK.format(views="name(), symbol() and decimals() of each token")
    chunk_size = 1000
    row_checks = RowChecks(keys=("block_number", "token_address"))
    unprovable = dict.fromkeys(columns, CALLED)

    def calls(self, blocks: int, filters: Any) -> int | None:
        return blocks * reader_calls(3 * len(_unique(filters["tokens"])))

    async def fetch(self, client: Any, blocks: BlockRange, **filters: Any) -> list[bytes]:
        tokens = _unique(filters["tokens"])
        calls = [{"to": t, "data": view} for t in tokens for view in (NAME, SYMBOL, DECIMALS)]
        answers = await view_answers(client, calls, blocks, room=METADATA_ROOM)
        return [json.dumps({"blocks": list(blocks), "tokens": tokens, "answers": answers}).encode()]

    def transform(self, bodies: Sequence[bytes], *, chain_id: int, u256: U256 = "decimal") -> pa.Table:
        tables = []
        for body in map(json.loads, bodies):
            numbers, (token,) = _grid(body["blocks"], len(body["tokens"]))
            outputs = [hex_bytes(a) for a in body["answers"]]  # an error (a dict) is no output
            out = {
                "block_number": numbers,
                "token_address": _addresses(body["tokens"], "token_address").take(token),
                "name": pa.array([text_view(o) for o in outputs[0::3]], pa.string()),
                "symbol": pa.array([text_view(o) for o in outputs[1::3]], pa.string()),
                "decimals": pa.array([decimals_view(o) for o in outputs[2::3]], pa.uint8()),
            }
            tables.append(build_arrow(out, self.columns, len(numbers), chain_id=chain_id, u256=u256))
        return self.concat(tables, u256)


ERC20_BALANCES = Erc20Balances()
ERC20_SUPPLIES = Erc20Supplies()
ERC20_METADATA = Erc20Metadata()
