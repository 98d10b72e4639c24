"""Checking a folder's datasets against the block headers they came with, offline: ``chainframe verify DIR``.

The blocks are the anchor: each stored block must hash, by keccak(RLP(header)), to its ``block_hash``, and link to
the one before it. Then every other dataset is checked against the blocks it shares with them:

- ``transactions``: each block's transactions are exactly the hashes its header's block lists, in order;
- ``receipts``: one per transaction of the block, on the same block hash;
- ``logs`` (the unfiltered series): per transaction exactly as many logs as its receipt's ``log_count`` (a list of
  logs cut short at its tail is caught here), on the same block hash, and the block's ``logsBloom`` rebuilt from its
  logs' addresses and topics.

Not yet: the transactions, receipts and withdrawals roots (tries), proofs against state roots, uncles against
``sha3Uncles``; a check that cannot run (a dataset missing) is reported as skipped with the reason, never as passed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from chainframe.decode import keccak256 as keccak
from chainframe.verify._header import header_hash

MAX_SHOWN = 20


@dataclass(frozen=True)
class Failure:
    dataset: str
    block: int | None
    check: str
    expected: str
    got: str


@dataclass
class CheckResult:
    dataset: str
    check: str
    rows: int = 0
    blocks: int = 0
    failures: list[Failure] = field(default_factory=list)
    skipped: str = ""
    """Why the check did not run ("" when it ran)."""


def _hex(value: Any) -> str:
    return "0x" + value.hex() if isinstance(value, bytes) else str(value)


def _read(out: Path, name: str) -> pl.DataFrame | None:
    folder = out / name
    if not folder.is_dir() or not any(folder.glob("*.parquet")):
        return None
    return pl.read_parquet(folder / "*.parquet")


def bloom(addresses_and_topics: list[bytes]) -> bytes:
    """The 2048-bit bloom of some log addresses and topics: 3 bits per item, from pairs of its keccak's bytes."""
    bits = 0
    for item in addresses_and_topics:
        digest = keccak(item)
        for i in (0, 2, 4):
            bits |= 1 << (int.from_bytes(digest[i : i + 2], "big") & 2047)
    return bits.to_bytes(256, "big")


def verify_folder(out: Path) -> list[CheckResult]:
    out = Path(out)
    results: list[CheckResult] = []
    blocks = _read(out, "blocks")
    if blocks is None:
        return [CheckResult("blocks", "block hash", skipped=f"no blocks series in {out}: nothing to anchor to")]
    blocks = blocks.sort("block_number")
    hashes = CheckResult("blocks", "block hash = keccak(RLP(header))", rows=blocks.height, blocks=blocks.height)
    for row in blocks.iter_rows(named=True):
        got = header_hash(row)
        if got != row["block_hash"]:
            hashes.failures.append(Failure("blocks", row["block_number"], hashes.check, _hex(row["block_hash"]),
                                           _hex(got) if got else "a header field is missing"))  # fmt: skip
    links = CheckResult("blocks", "parent hash links to the block before", rows=blocks.height, blocks=blocks.height)
    adjacent = blocks.select(
        pl.col("block_number"), pl.col("parent_hash"),
        pl.col("block_hash").shift(1).alias("before"), (pl.col("block_number").diff() == 1).alias("next"),
    ).filter(pl.col("next") & (pl.col("parent_hash") != pl.col("before")))  # fmt: skip
    for row in adjacent.iter_rows(named=True):
        links.failures.append(Failure("blocks", row["block_number"], links.check, _hex(row["before"]),
                                      _hex(row["parent_hash"])))  # fmt: skip
    results += [hashes, links]
    header = blocks.select("block_number", pl.col("block_hash").alias("header_hash"), "transaction_count",
                           "transaction_hashes", "logs_bloom")  # fmt: skip
    results += _transactions(_read(out, "transactions"), header)
    receipts = _read(out, "receipts")
    results += _receipts(receipts, header)
    results += _logs(_read(out, "logs"), receipts, header)
    return results


def _same_block(name: str, table: pl.DataFrame, header: pl.DataFrame) -> CheckResult:
    joined = table.join(header, on="block_number", how="inner")
    result = CheckResult(name, "block hash is the header's", rows=joined.height,
                         blocks=joined["block_number"].n_unique())  # fmt: skip
    bad = joined.filter(pl.col("block_hash") != pl.col("header_hash")).unique("block_number", keep="first")
    for row in bad.head(MAX_SHOWN).iter_rows(named=True):
        result.failures.append(Failure(name, row["block_number"], result.check, _hex(row["header_hash"]),
                                       _hex(row["block_hash"])))  # fmt: skip
    return result


def _transactions(txs: pl.DataFrame | None, header: pl.DataFrame) -> list[CheckResult]:
    if txs is None:
        return [CheckResult("transactions", "transactions are the header's", skipped="no transactions series")]
    stored = (
        txs.sort("block_number", "transaction_index")
        .group_by("block_number", maintain_order=True)
        .agg(pl.col("transaction_hash").alias("stored"))
    )
    joined = header.filter(pl.col("block_number").is_between(txs["block_number"].min(), txs["block_number"].max()))
    joined = joined.join(stored, on="block_number", how="left").with_columns(pl.col("stored").fill_null([]))
    result = CheckResult("transactions", "each block's transactions are the hashes its header lists, in order",
                         rows=txs.height, blocks=joined.height)  # fmt: skip
    for row in joined.filter(pl.col("stored") != pl.col("transaction_hashes")).head(MAX_SHOWN).iter_rows(named=True):
        want, got = f"{len(row['transaction_hashes'])} transactions", f"{len(row['stored'])}"
        result.failures.append(Failure("transactions", row["block_number"], result.check, want, got))
    return [result, _same_block("transactions", txs, header)]


def _receipts(receipts: pl.DataFrame | None, header: pl.DataFrame) -> list[CheckResult]:
    if receipts is None:
        return [CheckResult("receipts", "one receipt per transaction", skipped="no receipts series")]
    counts = receipts.group_by("block_number").agg(pl.len().alias("stored"))
    joined = (
        header.filter(pl.col("block_number").is_between(receipts["block_number"].min(), receipts["block_number"].max()))
        .join(counts, on="block_number", how="left")
        .with_columns(pl.col("stored").fill_null(0))
    )
    result = CheckResult("receipts", "one receipt per transaction of the block", rows=receipts.height,
                         blocks=joined.height)  # fmt: skip
    for row in joined.filter(pl.col("stored") != pl.col("transaction_count")).head(MAX_SHOWN).iter_rows(named=True):
        result.failures.append(Failure("receipts", row["block_number"], result.check, str(row["transaction_count"]),
                                       str(row["stored"])))  # fmt: skip
    return [result, _same_block("receipts", receipts, header)]


def _logs(logs: pl.DataFrame | None, receipts: pl.DataFrame | None, header: pl.DataFrame) -> list[CheckResult]:
    if logs is None:
        return [CheckResult("logs", "logs complete", skipped="no unfiltered logs series")]
    out = [_same_block("logs", logs, header)]
    if receipts is None:
        out.append(CheckResult("logs", "as many logs per transaction as its receipt says",
                               skipped="no receipts series to count logs against"))  # fmt: skip
    else:
        stored = logs.group_by("block_number", "transaction_index").agg(pl.len().alias("stored"))
        span = logs["block_number"].min(), logs["block_number"].max()
        joined = (
            receipts.filter(pl.col("block_number").is_between(*span))
            .join(stored, on=["block_number", "transaction_index"], how="full", coalesce=True)
            .with_columns(pl.col("stored").fill_null(0), pl.col("log_count").fill_null(0))
        )
        result = CheckResult("logs", "as many logs per transaction as its receipt says", rows=logs.height,
                             blocks=joined["block_number"].n_unique())  # fmt: skip
        for row in joined.filter(pl.col("stored") != pl.col("log_count")).head(MAX_SHOWN).iter_rows(named=True):
            result.failures.append(Failure("logs", row["block_number"], result.check,
                                           f"{row['log_count']} logs in transaction {row['transaction_index']}",
                                           f"{row['stored']}"))  # fmt: skip
        out.append(result)
    blooms = CheckResult("logs", "the block's logsBloom rebuilt from its logs", rows=logs.height)
    items = logs.group_by("block_number").agg(
        pl.col("address"), pl.col("topics").list.explode(keep_nulls=False, empty_as_null=False)
    )
    rebuilt = {row["block_number"]: bloom([*row["address"], *row["topics"]]) for row in items.iter_rows(named=True)}
    span = logs["block_number"].min(), logs["block_number"].max()
    for row in header.filter(pl.col("block_number").is_between(*span)).iter_rows(named=True):
        blooms.blocks += 1
        got = rebuilt.get(row["block_number"], bytes(256))
        if got != row["logs_bloom"]:
            blooms.failures.append(Failure("logs", row["block_number"], blooms.check, _hex(row["logs_bloom"]),
                                           _hex(got)))  # fmt: skip
    out.append(blooms)
    return out
