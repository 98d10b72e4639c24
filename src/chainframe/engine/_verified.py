"""``verify=True``: each piece's rows proven against its blocks' headers before they are kept.

The blocks, transactions, receipts and logs of one slot that a run fetches together are each other's proof, and are
proven together from their own rows (:mod:`chainframe.engine._joint`); this module proves every other piece, and
those of a group that proved nothing.

For a piece of blocks the engine fetches the headers (``eth_getBlockByNumber``) and, for logs and receipts, the
blocks' receipts (``eth_getBlockReceipts``), then runs :func:`chainframe.verify.verify_tables` on them with the rows:

- every header hashes to its block hash (all header fields are what the node signed off);
- ``blocks``: the rows are headers themselves; ``transactions``: ``transactionsRoot``; ``receipts``: ``receiptsRoot``
  (with the logs inside the same answers); ``uncles``: ``sha3Uncles``; ``account_proofs`` and ``storage_proofs``: the
  proofs against ``stateRoot``, a slot's against its account's ``storageHash`` (in an extraction from the same
  ``eth_getProof`` answers; for stored slots, from the accounts' proofs fetched again at their blocks);
- logs (plain, filtered, ``event=`` series and the token transfers): the blocks' receipts are proven against
  ``receiptsRoot`` and ``logsBloom``, and the logs kept must be exactly the receipts' logs that match the filter
  (a dropped, added or altered log fails ``log_set``);
- every row's block hash is its header's.

A failed check is :class:`~chainframe.engine._answers.WrongAnswer`: the piece is fetched again, then the error names
the method, blocks, endpoint and the check with both values. Call traces have no header field that commits to them:
they are reported as skipped, with the reason, never as verified.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from chainframe.datasets import (
    ACCOUNT_PROOFS,
    BLOCKS,
    RECEIPTS,
    TRANSACTIONS,
    U256,
    BlockRange,
    Dataset,
    Proof,
)
from chainframe.engine._answers import WrongAnswer
from chainframe.engine._shared import Received

if TYPE_CHECKING:
    import polars as pl

    from chainframe.verify import Report
else:
    from chainframe._lazy import polars as pl

_NOT_IN_RECEIPTS = frozenset({"chain_id", "block_timestamp", "block_time", "removed"})
"""Log columns a receipt's logs do not carry (or that are ours): not compared."""


def _report() -> Report:
    from chainframe.verify import Report  # loaded by runs that verify, not by every run

    return Report()


@dataclass
class Material:
    """What a piece is proven against: its blocks' headers, and their receipts and transactions where the dataset
    needs them (receipts' sender, recipient, price paid and created address follow from their transactions), and
    the accounts' proofs stored slots are proven under (a slot's proof hangs from its account's storage hash)."""

    headers: list[bytes]
    receipts: list[bytes] = field(default_factory=list)
    transactions: list[bytes] = field(default_factory=list)
    accounts: list[bytes] = field(default_factory=list)


@dataclass
class Proven:
    """Blocks and rows proven, and the checks skipped (with why), for a run's report."""

    blocks: int = 0
    rows: int = 0
    skipped: dict[str, str] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    """Checks that passed as the node encodes something (Ganache's receipts trie), for the run's summary."""

    def add(self, other: Proven) -> None:
        self.blocks += other.blocks
        self.rows += other.rows
        self.skipped.update(other.skipped)
        self.notes.update(other.notes)


async def material(
    client: Any,
    dataset: Dataset,
    part: BlockRange,
    *,
    receipts: bool = False,
    addresses: Sequence[str] = (),
    filters: Mapping[str, Any] | None = None,
) -> Material | None:
    """Fetch what ``dataset``'s rows for ``part`` are proven against (None: nothing can prove them); ``receipts``:
    the blocks' receipts too, for stored receipts (whose logs are not stored with them); ``addresses``: the accounts
    of stored storage slots, whose proofs (``eth_getProof`` with no keys) give the storage hash the slots hang from;
    ``filters``: the rows' inputs (a state read's accounts and slots, proven by their own eth_getProof answers)."""
    if dataset.proof is None:
        return None
    if dataset.proof is Proof.HEADERS:
        return Material([])  # the rows are the headers
    headers = await BLOCKS.fetch(client, part)
    if dataset.proof is Proof.STATE:
        return Material(headers, accounts=await dataset.proof_answers(client, part, filters or {}))
    if dataset.proof is Proof.DERIVED:
        return await _inputs(client, dataset, part, headers, stored=receipts)
    moved = dataset.proof is Proof.NATIVE_TRANSFERS  # a transaction's value stands only if its receipt says success
    wanted = dataset.proof is Proof.LOGS or moved or (receipts and dataset.proof is Proof.RECEIPTS)
    transactions = await TRANSACTIONS.fetch(client, part) if dataset.proof is Proof.RECEIPTS or moved else []
    accounts = await ACCOUNT_PROOFS.fetch(client, part, addresses=list(addresses)) if addresses else []
    return Material(headers, await RECEIPTS.fetch(client, part) if wanted else [], transactions, accounts)


def verify_reads(dataset: Dataset) -> set[tuple[str, tuple[Any, ...]]]:
    """The calls per block (a method and its parameters after the block) that extracting ``dataset`` with ``verify``
    makes whose answers are a block's whole: its own (:attr:`Dataset.block_params`) and what :func:`material`
    fetches in an extraction. The run shares them between its datasets (engine._shared)."""
    read = [dataset, *dataset.derived_from]  # a derived dataset's answers are those of the datasets it is made of
    if dataset.proof not in (None, Proof.HEADERS):
        read.append(BLOCKS)
    if dataset.proof in (Proof.RECEIPTS, Proof.NATIVE_TRANSFERS):
        read.append(TRANSACTIONS)
    if dataset.proof in (Proof.LOGS, Proof.NATIVE_TRANSFERS):
        read.append(RECEIPTS)
    return {(d.method, d.block_params) for d in read if d.block_params is not None}


async def _inputs(client: Any, dataset: Dataset, part: BlockRange, headers: list[bytes], *, stored: bool) -> Material:
    """A derived dataset's material: in an extraction, its rows' own answers hold the transactions and receipts they
    are computed from (only the headers are fetched); stored rows have them fetched again."""
    if not stored:
        return Material(headers)
    receipts = await RECEIPTS.fetch(client, part) if RECEIPTS in dataset.derived_from else []
    return Material(headers, receipts, await TRANSACTIONS.fetch(client, part))


def prove(
    dataset: Dataset,
    rows: pa.Table,
    part: BlockRange,
    proof: Material | None,
    *,
    chain_id: int,
    filters: Mapping[str, Any],
    bodies: Sequence[bytes] = (),
    u256: U256 = "decimal",
    report: Report,
    name: str | None = None,
    received: Received | None = None,
) -> None:
    """Prove ``rows`` (the dataset's rows for ``part``; in an extraction, the logs datasets' logs before decoding)
    against ``proof``, adding counts, failures and skips to ``report``. ``bodies``: the rows' own answers (receipts
    carry their logs); without them, receipts are proven with the node's receipts' logs. ``received``: the shared
    answers among the piece's (in an extraction: what another dataset proved of them is not proven again)."""
    from chainframe.verify import check_log_set, receipts_and_logs, verify_tables

    name = name or dataset.name
    received = received or Received()
    if proof is None:
        reasons = "; ".join(sorted(set(dataset.unprovable.values()))) or "nothing to prove it against"
        report.skip(name, "all", reasons, blocks=len(part))
        return
    # The blocks dataset's rows are the headers; every other dataset is proven against headers fetched for it.
    headers = (
        rows if dataset.proof is Proof.HEADERS else BLOCKS.transform(proof.headers, chain_id=chain_id, u256="binary")
    )
    # verify_tables counts what it proves per dataset (headers among them): only its failures and skips are kept,
    # and the rows counted are this series' own.
    found = _report()
    # In an extraction, answers another dataset of the run proved already (the same answers: engine._shared) are
    # not proven again; the rows made of them still are.
    known = dataset.proof is not Proof.HEADERS and received.proven(proof.headers, Proof.HEADERS)
    if dataset.proof is Proof.LOGS:
        receipts, logs = receipts_and_logs(proof.receipts, chain_id=chain_id)
        if not (known and received.proven(proof.receipts, Proof.RECEIPTS)):
            verify_tables(blocks=headers, receipts=receipts, logs=logs, report=found, headers=not known)
        check_log_set(dataset, rows, logs, filters, found, u256=u256, leave=_NOT_IN_RECEIPTS)
        # Columns a receipt's logs do not carry: the rows' own block columns, chain and removed flag.
        from chainframe.verify import check_header_columns, check_not_removed

        check_header_columns(name, rows, headers, found, chain_id=chain_id,
                             columns=("block_timestamp", "block_time", "chain_id"))  # fmt: skip
        check_not_removed(name, rows, found)
        _same_block_hashes(name, rows, headers, found)  # the other datasets': verify_tables's row_block_hash
    elif dataset.proof is Proof.RECEIPTS:
        _, logs = receipts_and_logs(list(bodies or proof.receipts), chain_id=chain_id)
        transactions = TRANSACTIONS.transform(proof.transactions, chain_id=chain_id, u256="binary")
        ours = frozenset({RECEIPTS.name}) if received.proven(bodies, Proof.RECEIPTS) else _NONE  # by the logs
        proven = _proven(received, proof.transactions) | ours
        verify_tables(blocks=headers, receipts=rows, logs=logs, transactions=transactions, report=found,
                      chain_id=chain_id, headers=not known, proven=proven)  # fmt: skip
    elif dataset.proof is Proof.HEADERS:
        verify_tables(blocks=rows, report=found, chain_id=chain_id)
    elif dataset.proof is Proof.SLOTS:
        # A slot's proof hangs from its account's storage hash, proven by the account's proof against stateRoot: the
        # rows' own eth_getProof answers carry it, stored rows have the accounts' proofs fetched again.
        answers = list(bodies or proof.accounts)
        accounts = ACCOUNT_PROOFS.transform(answers, chain_id=chain_id, u256="binary") if answers else None
        verify_tables(blocks=headers, account_proofs=accounts, storage_proofs=rows, report=found, chain_id=chain_id)
    elif dataset.proof is Proof.TRANSACTIONS:
        verify_tables(blocks=headers, transactions=rows, report=found, chain_id=chain_id, headers=not known,
                      proven=_proven(received, bodies))  # fmt: skip
    elif dataset.proof is Proof.DERIVED:
        _prove_derived(dataset, rows, headers, proof, bodies, chain_id=chain_id, report=found, name=name)
    elif dataset.proof is Proof.NATIVE_TRANSFERS:
        _same_top_values(name, rows, headers, proof, found, chain_id=chain_id)
    elif dataset.proof is Proof.UNCLES:
        verify_tables(blocks=headers, uncles=rows, report=found, chain_id=chain_id)
    elif dataset.proof is Proof.ACCOUNTS:
        verify_tables(blocks=headers, account_proofs=rows, report=found, chain_id=chain_id)
    elif dataset.proof is Proof.STATE:
        _same_state(name, dataset, rows, proof.accounts, headers, found, chain_id=chain_id)
    else:
        raise AssertionError(f"{dataset.name}: no prover for {dataset.proof}")
    if dataset.proof in (Proof.LOGS, Proof.RECEIPTS):  # the logs checked for repeats there are the node's own
        found.failures[:] = [_node_repeats(f) for f in found.failures]
    for failure in found.failures:
        report.failures.append(replace(failure, dataset=name))
    for skip in found.skipped:
        report.skip(name, skip.check, skip.reason, blocks=skip.blocks)
    for (_, what), blocks in found.notes.items():
        report.note(name, what, blocks=blocks)
    report.count(name, blocks=len(part), rows=rows.num_rows)


_NONE = frozenset[str]()


def _proven(received: Received, transactions: Sequence[bytes]) -> frozenset[str]:
    """The transactions' table name where these full blocks' transactions were proven by another dataset of the
    run (``verify_tables``'s ``proven``)."""
    return frozenset({TRANSACTIONS.name}) if received.proven(transactions, Proof.TRANSACTIONS) else _NONE


def _said_proven(dataset: Dataset, proof: Material, bodies: Sequence[bytes], received: Received) -> None:
    """A piece proven: what its answers were proven to be, for the run's other datasets reading the same ones."""
    received.mark(proof.headers, Proof.HEADERS)
    if dataset.proof is Proof.HEADERS:
        received.mark(bodies, Proof.HEADERS)
    elif dataset.proof is Proof.TRANSACTIONS:
        received.mark(bodies, Proof.TRANSACTIONS)
    elif dataset.proof is Proof.RECEIPTS:  # the receipts with their logs (the piece's own), and their transactions
        received.mark(bodies, Proof.RECEIPTS)
        received.mark(proof.transactions, Proof.TRANSACTIONS)
    elif dataset.proof is Proof.LOGS:
        received.mark(proof.receipts, Proof.RECEIPTS)


_NODE_REPEATS = (
    " in the node's own receipts: its answers give two logs of one block the same logIndex (a node that numbers them"
    " per transaction), an inconsistency of the node, not a sign that stored data was changed"
)


def _node_repeats(failure: Any) -> Any:
    """A repeated (block, log index) found among the logs of the node's receipts, said to be the node's."""
    return replace(failure, actual=failure.actual + _NODE_REPEATS) if failure.check == "log_unique" else failure


def _prove_derived(
    dataset: Dataset,
    rows: pa.Table,
    headers: pa.Table,
    proof: Material,
    bodies: Sequence[bytes],
    *,
    chain_id: int,
    report: Report,
    name: str,
) -> None:
    """Rows computed from transactions (and receipts): those are proven against the headers, then the rows must be
    exactly what the dataset computes from them (none dropped, added or changed)."""
    from chainframe.verify import check_same_rows, receipts_and_logs, verify_tables

    transaction_answers, receipt_answers = dataset.inputs_of(bodies) if bodies else (proof.transactions, proof.receipts)
    transactions = TRANSACTIONS.transform(transaction_answers, chain_id=chain_id, u256="binary")
    receipts = logs = None
    if RECEIPTS in dataset.derived_from:
        receipts, logs = receipts_and_logs(receipt_answers, chain_id=chain_id)
    verify_tables(blocks=headers, transactions=transactions, receipts=receipts, logs=logs, report=report,
                  chain_id=chain_id)  # fmt: skip
    want = dataset.derive(transactions, receipts, logs, chain_id=chain_id)
    check_same_rows(name, "derived_rows", rows, want, list(dataset.sort), report)


def verify_piece(
    dataset: Dataset,
    rows: pa.Table,
    part: BlockRange,
    proof: Material | None,
    *,
    chain_id: int,
    filters: Mapping[str, Any],
    bodies: Sequence[bytes] = (),
    received: Received | None = None,
) -> Proven:
    """:func:`prove` in an extraction: the first failure raises :class:`WrongAnswer` naming the block and check."""
    report = _report()
    received = received or Received()
    prove(dataset, rows, part, proof, chain_id=chain_id, filters=filters, bodies=bodies, report=report,
          received=received)  # fmt: skip
    if report.failures:
        first = report.failures[0]
        more = f" (and {len(report.failures) - 1} more)" if len(report.failures) > 1 else ""
        raise WrongAnswer(
            f"block {first.block_number}: answered {first.expected}, computed {first.actual}{more}",
            check=f"verify {first.check}",
        )
    if proof is not None:
        _said_proven(dataset, proof, bodies, received)
    return Proven(
        blocks=len(part) if proof is not None else 0,
        rows=rows.num_rows if proof is not None else 0,
        skipped={(s.dataset if s.check == "all" else f"{s.dataset} {s.check}"): s.reason for s in report.skipped},
        notes={what: f"verified: {what}" for _, what in report.notes},
    )


_PROVEN_MOVES = ("transaction", "withdrawal")
"""The movements of ether a header proves: a transaction's own value, a withdrawal (all others are execution)."""


def _same_top_values(
    name: str, rows: pa.Table, headers: pa.Table, proof: Material, report: Report, *, chain_id: int
) -> None:
    """Movements of ether: the proven ones are exactly what the proven transactions (with value, and a receipt
    saying success) and the headers' withdrawals (gwei, as wei) give; internal movements are reported as skipped."""
    from chainframe.verify import check_same_rows, receipts_and_logs, verify_tables

    transactions = TRANSACTIONS.transform(proof.transactions, chain_id=chain_id, u256="binary")
    receipts, logs = receipts_and_logs(proof.receipts, chain_id=chain_id)
    verify_tables(blocks=headers, transactions=transactions, receipts=receipts, logs=logs, report=report,
                  chain_id=chain_id)  # fmt: skip
    where = ["block_number", "transaction_index"]
    sent = pl.DataFrame(pl.from_arrow(transactions.select([*where, "transaction_hash", "from_address", "to_address",
                                                           "value"])))  # fmt: skip
    done = pl.DataFrame(pl.from_arrow(receipts.select([*where, "status", "contract_address"])))
    moved = (
        sent.join(done, on=where)
        .with_columns(_wei(pl.col("value")).alias("value"), pl.col("to_address").fill_null(pl.col("contract_address")))
        .filter((pl.col("status") == 1) & (pl.col("value") != "0"))
        .select("block_number", pl.format("transaction {}", "transaction_index").alias("at"),
                "transaction_hash", "from_address", "to_address", "value")
    )  # fmt: skip
    paid = pl.DataFrame(pl.from_arrow(headers.select(["block_number", "withdrawals"]))).explode("withdrawals")
    paid = paid.filter(pl.col("withdrawals").is_not_null()).unnest("withdrawals")
    paid = paid.select(
        "block_number", pl.format("withdrawal {}", "index").alias("at"), pl.lit(None, pl.Binary).alias(
            "transaction_hash"), pl.lit(None, pl.Binary).alias("from_address"), pl.col("address").alias("to_address"),
        (pl.col("amount").cast(pl.Decimal(38, 0)) * 10**9).cast(pl.Decimal(38, 0)).cast(pl.String).alias("value"),
    )  # fmt: skip
    have = (
        pl.DataFrame(pl.from_arrow(rows))
        .filter(pl.col("transfer_type").is_in(_PROVEN_MOVES))
        .select("block_number", pl.format("{} {}", "transfer_type", pl.coalesce("transaction_index",
                "withdrawal_index")).alias("at"), "transaction_hash", "from_address", "to_address",
                _wei(pl.col("value")).alias("value"))
    )  # fmt: skip
    want = pl.concat([moved.cast(have.schema), paid.cast(have.schema)])
    check_same_rows(name, "value", have.to_arrow(), want.to_arrow(), ["block_number", "at"], report)
    if any(kind not in _PROVEN_MOVES for kind in set(rows["transfer_type"].to_pylist())):
        why = "movements inside execution (calls, creations, self-destructs) come from traces, which no header field "
        report.skip(name, "internal", why + "commits to", blocks=len(set(rows["block_number"].to_pylist())))


def _wei(value: pl.Expr) -> pl.Expr:
    """An amount of wei as decimal text, whether stored as decimal128 or as a 32-byte word."""
    return value.map_elements(
        lambda v: str(int.from_bytes(v, "big")) if isinstance(v, bytes) else str(int(v)), return_dtype=pl.String
    )


def _same_state(
    name: str,
    dataset: Dataset,
    rows: pa.Table,
    answers: Sequence[bytes],
    headers: pa.Table,
    report: Report,
    *,
    chain_id: int,
) -> None:
    """A state read's rows are what eth_getProof of the same accounts (and slots) at the same blocks says, those
    proofs proven against the headers' state roots (a slot's against its account's storage hash); a code hashes to
    its code hash. The proofs are of exactly the rows asked: a row dropped, added or moved to another block fails."""
    from chainframe.datasets import STORAGE_PROOFS
    from chainframe.verify import check_same_rows, verify_tables

    # The proven values in the rows' own form (a balance as decimal or as a 32-byte word).
    wide = "balance" in rows.column_names and pa.types.is_fixed_size_binary(rows.schema.field("balance").type)
    u256: U256 = "binary" if wide else "decimal"
    accounts = ACCOUNT_PROOFS.transform(answers, chain_id=chain_id, u256=u256)
    keyed = "storage_key" in rows.column_names
    slots = STORAGE_PROOFS.transform(answers, chain_id=chain_id, u256=u256) if keyed else None
    verify_tables(blocks=headers, account_proofs=accounts, storage_proofs=slots, report=report, chain_id=chain_id)
    want = slots if slots is not None else accounts
    key = list(dataset.sort)
    values = [c for c in rows.column_names if c in want.column_names and c not in key]
    check_same_rows(name, "state", rows.select(key + values), want.select(key + values), key, report)
    if "code" in rows.column_names and "code_hash" in rows.column_names:
        _same_code_hashes(name, rows, report)


def _same_code_hashes(dataset: str, rows: pa.Table, report: Report) -> None:
    """Each stored code hashes to its row's code hash (which the account's proof proves)."""
    from chainframe._keccak import keccak256
    from chainframe.verify import Failure

    frame = pl.DataFrame(pl.from_arrow(rows.select(["block_number", "address", "code", "code_hash"])))
    distinct = frame["code"].unique()
    hashes = pl.Series([keccak256(c) for c in distinct.to_list()], dtype=pl.Binary())
    computed = frame["code"].replace_strict(distinct, hashes, return_dtype=pl.Binary())
    wrong = frame.with_columns(computed.alias("computed")).filter(pl.col("computed") != pl.col("code_hash"))
    for number, address, _, stored, hashed in wrong.head(3).rows():
        at = f"address 0x{bytes(address).hex()} code_hash 0x{bytes(stored).hex()}"
        report.failures.append(Failure(dataset, number, "code_hash", at, f"keccak of its code 0x{bytes(hashed).hex()}"))


def _same_block_hashes(dataset: str, rows: pa.Table, headers: pa.Table, report: Report) -> None:
    """Every row's block hash is the proven header's (a row from another fork would otherwise pass)."""
    from chainframe.verify import Failure

    if rows.num_rows == 0 or "block_hash" not in rows.column_names or "block_number" not in rows.column_names:
        return
    have = pl.DataFrame(pl.from_arrow(rows.select(["block_number", "block_hash"])))
    want = pl.DataFrame(pl.from_arrow(headers.select(["block_number", "block_hash"]))).rename(
        {"block_hash": "header_hash"}
    )
    wrong = have.join(want, on="block_number", how="left").filter(
        pl.col("header_hash").is_null() | (pl.col("block_hash") != pl.col("header_hash"))
    )
    for number, stored, header in wrong.unique("block_number").sort("block_number").head(3).rows():
        shown = "no header" if header is None else "0x" + bytes(header).hex()
        report.failures.append(Failure(dataset, number, "row_block_hash", "0x" + bytes(stored).hex(), shown))
