"""The rows each dataset must hold, computed here from the node's own JSON answers (raw JSON-RPC, below any
chainframe client and transform), and a column-by-column comparison of stored rows with them."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import datetime
from decimal import Decimal
from typing import Any

from chainframe.devnet import Devnet
from tests.devnet.rpc import call, post

TRANSFER = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
# Column -> JSON key where the name does not say it in camelCase (per dataset; "*" for all).
ALIASES: dict[str, dict[str, str]] = {
    "blocks": {"block_number": "number", "block_hash": "hash", "block_nonce": "nonce",
               "transaction_hashes": "transactions"},
    "transactions": {"transaction_hash": "hash", "transaction_type": "type", "from_address": "from",
                     "to_address": "to", "transaction_chain_id": "chainId"},
    "receipts": {"transaction_type": "type", "from_address": "from", "to_address": "to"},
    "*": {},
}  # fmt: skip


def batch(url: str, calls: list[tuple[str, list[Any]]]) -> list[Any]:
    """Each call's result, in order; any error fails the test (these are all methods the node serves)."""
    answers = post(url, [call(m, *p, id=i) for i, (m, p) in enumerate(calls)]).json()
    by_id = {a["id"]: a for a in answers}
    for i, (method, _) in enumerate(calls):
        assert "error" not in by_id[i], (method, by_id[i])
    return [by_id[i]["result"] for i in range(len(calls))]


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)


def _hex_bytes(value: str) -> bytes:
    return bytes.fromhex(value.removeprefix("0x"))


def comparable(stored: Any, answered: Any) -> Any:
    """The JSON value in the stored value's Python type (bytes, int, bool, list of bytes); None for no value."""
    if answered is None:
        return None
    if isinstance(stored, bytes):  # r and s are quantities in JSON: their leading zeros are not sent
        return _hex_bytes(answered.removeprefix("0x").rjust(2 * len(stored), "0"))
    if isinstance(stored, bool):
        return bool(answered)
    if isinstance(stored, int | Decimal):
        return int(answered, 16) if isinstance(answered, str) else int(answered)
    if isinstance(stored, list) and all(isinstance(s, bytes) for s in stored):
        return [_hex_bytes(a) for a in answered]
    raise TypeError(f"no comparison for {type(stored).__name__}")


def compare(
    dataset: str,
    rows: Iterable[Mapping[str, Any]],
    answers: Mapping[tuple[int, ...], Mapping[str, Any]],
    keys: tuple[str, ...],
    derived: Mapping[str, Any] | None = None,
) -> set[str]:
    """Assert each row equals its answer in every column the JSON holds; return the columns compared.

    ``derived`` maps a column to a function (row's answer -> expected value) for columns no JSON key names."""
    aliases = {**ALIASES["*"], **ALIASES.get(dataset, {})}
    compared: set[str] = set()
    seen = []
    for row in rows:
        key = tuple(int(row[k]) for k in keys)
        seen.append(key)
        answer = answers[key]
        for column, value in row.items():
            if isinstance(value, datetime) or (isinstance(value, list) and value and isinstance(value[0], dict)):
                continue  # block_time is the timestamp again; struct lists are compared by length below
            if derived and column in derived:
                expected = derived[column](answer)
            else:
                name = aliases.get(column, camel(column))
                if name not in answer:
                    continue
                if value is None:
                    assert answer[name] in (None, "0x", []), (dataset, key, column, answer[name])
                    continue
                expected = comparable(value, answer[name])
            assert value == expected, f"{dataset} {key} {column}: stored {value!r}, node {expected!r}"
            compared.add(column)
        for column in ("access_list", "authorization_list", "withdrawals"):
            if column in row and camel(column) in answer:
                assert len(row[column] or []) == len(answer[camel(column)] or []), (dataset, key, column)
    assert sorted(seen) == sorted(answers), f"{dataset}: rows for {len(seen)} keys, the node has {len(answers)}"
    return compared


class NodeAnswers:
    """The node's own JSON for the whole chain, read once."""

    TRANSFER_TOPIC = TRANSFER

    def __init__(self, devnet: Devnet) -> None:
        url, head = devnet.node.url, devnet.truth.head
        self.head = head
        self.chain_id = int(batch(url, [("eth_chainId", [])])[0], 16)
        self.blocks = batch(url, [("eth_getBlockByNumber", [hex(n), True]) for n in range(head + 1)])
        self.txs = [tx for b in self.blocks for tx in b["transactions"]]
        self.receipts = batch(url, [("eth_getTransactionReceipt", [tx["hash"]]) for tx in self.txs])
        self.logs = batch(url, [("eth_getLogs", [{"fromBlock": "0x0", "toBlock": hex(head)}])])[0]
        self.timestamps = {int(b["number"], 16): int(b["timestamp"], 16) for b in self.blocks}

    def by_block(self) -> dict[tuple[int, ...], dict[str, Any]]:
        return {(int(b["number"], 16),): {**b, "transactions": [t["hash"] for t in b["transactions"]]}
                for b in self.blocks}  # fmt: skip

    def by_transaction(self, objects: list[dict[str, Any]]) -> dict[tuple[int, ...], dict[str, Any]]:
        return {(int(o["blockNumber"], 16), int(o["transactionIndex"], 16)): o for o in objects}

    def by_log(self, logs: list[dict[str, Any]]) -> dict[tuple[int, ...], dict[str, Any]]:
        return {(int(o["blockNumber"], 16), int(o["logIndex"], 16)): o for o in logs}

    def erc20(self) -> dict[tuple[int, ...], dict[str, Any]]:
        """Transfer logs with three topics (ERC-20's; ERC-721 indexes its token id too), decoded here."""
        out = {}
        for key, log in self.by_log(self.logs).items():
            topics = log["topics"]
            if len(topics) == 3 and topics[0] == TRANSFER:
                out[key] = {**log, "fromAddress": "0x" + topics[1][-40:], "toAddress": "0x" + topics[2][-40:],
                            "value": log["data"]}  # fmt: skip
        return out

    def common(self) -> dict[str, Any]:
        """Derived columns every row-per-item dataset has: the chain id and its block's timestamp (and hash, for the
        datasets whose JSON has no block hash: eth_getProof's)."""
        return {
            "chain_id": lambda answer: self.chain_id,
            "block_timestamp": lambda answer: self.timestamps[int(answer["blockNumber"], 16)],
        }


def one_line_naming(message: str, method: str) -> bool:
    return "\n" not in message.strip() and re.search(rf"\b{method}\b", message) is not None
