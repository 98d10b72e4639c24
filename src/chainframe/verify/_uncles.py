"""Uncles against their nephew's ``sha3Uncles`` = keccak(RLP(list of uncle headers)), and each uncle's own hash."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from chainframe.verify._hashing import RlpItem, keccak, rlp
from chainframe.verify._headers import FIXED, LATER, header_items
from chainframe.verify._report import Failure, Report


def check_uncles(uncles: pa.Table, blocks: pa.Table, report: Report) -> None:
    names = [n for n in (*FIXED, *LATER, "block_hash", "nephew_number", "uncle_index") if n in uncles.column_names]
    by_nephew: dict[int, list[dict[str, Any]]] = {}
    for row in uncles.select(names).to_pylist():
        by_nephew.setdefault(row["nephew_number"], []).append(row)
    incomplete = 0
    proven = 0
    for number, stored in zip(blocks["block_number"].to_pylist(), blocks["sha3_uncles"].to_pylist(), strict=True):
        headers: list[RlpItem] = []
        for row in sorted(by_nephew.get(number, []), key=lambda r: r["uncle_index"]):
            items = header_items(row)
            if items is None:
                break
            if keccak(rlp(items)) != row["block_hash"]:
                report.failures.append(
                    Failure(
                        "uncles", number, "uncle_hash", "0x" + row["block_hash"].hex(), "0x" + keccak(rlp(items)).hex()
                    )
                )
            headers.append(items)
        else:
            computed = keccak(rlp(headers))
            if computed != stored:
                report.failures.append(
                    Failure("uncles", number, "sha3_uncles", "0x" + (stored or b"").hex(), "0x" + computed.hex())
                )
            proven += 1
            continue
        incomplete += 1
    report.skip("uncles", "sha3_uncles", "an uncle header field is not stored", blocks=incomplete)
    report.count("uncles", blocks=proven, rows=uncles.num_rows)
