"""State diffs: how each transaction changed state, one row per (block, transaction, account[, slot]) that changed,
with the value before and after: ``balance_diffs``, ``nonce_diffs``, ``code_diffs``, ``storage_diffs`` (cryo's four;
cryo names the two values ``from_value`` and ``to_value``, one name with a type per dataset: here each pair is named
for what it holds, so a name keeps one type across the catalogue).

Two routes, best first, taken in turn where the node says it lacks a method (as the block traces do):

1. ``trace_replayBlockTransactions`` with ``["stateDiff"]`` (parity style: Erigon, Reth, Nethermind, anvil): per
   transaction, each account's ``balance``/``nonce``/``code`` as ``"="`` (unchanged), ``{"*": {"from", "to"}}``,
   ``{"+": new}`` (born) or ``{"-": old}`` (died), and its changed slots the same way;
2. ``debug_traceBlockByNumber`` with ``prestateTracer`` in diff mode (geth): per transaction, ``pre`` (the touched
   accounts as they were) and ``post`` (only what changed; an account absent from ``post`` was destroyed, a slot
   absent from it became zero, as geth leaves zero values out).

Both answers are read into the same (account, field, before, after) changes, so rows do not depend on the route.
Hardhat and Ganache serve neither (Hardhat's debug_traceTransaction takes no tracer, Ganache has no trace_ methods):
there one error names the methods tried and the node's answers.

Changes no transaction makes are rows too, with no transaction and a ``change_type`` of their kind, read beside the
diffs (neither route reports them) where a dataset declares them (``block_level``): ``system_call`` (storage_diffs:
EIP-2935's parent hash and EIP-4788's beacon root, each slot the EIPs name read before and after the block where its
contract has code, a row where it changed; anvil writes the first every block and has no code for the second; EIP-2935's
slots are read for a whole piece with two eth_getProof, see :func:`_history_slots`) and ``withdrawal``
(balance_diffs: a withdrawn account's balance at the block, less what the block's withdrawals credit it). Block and
uncle rewards (before the merge) are reported by neither route: not rows.

Proof (:class:`StateDiffsProof`): the diffs add up. For each account (and slot) a block touches, its first
``before`` is its state at the previous block and its last ``after`` its state at the block, both read with
``eth_getProof`` and proven against the two headers' state roots; within a block each row's ``before`` is the
previous row's ``after``. The slots and accounts a block-level change may touch are asked for from the headers, not
from the rows, so a change without its row fails; an extraction's own answers name what is touched (never fetched
twice).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import anyio
import pyarrow as pa

from chainframe._errors import DecodeError, first_error
from chainframe.datasets import _buffers
from chainframe.datasets._block_traces import _document, batch_or_raise, batch_results
from chainframe.datasets._columns import COLUMNS, U256
from chainframe.datasets._context import fetch_with_context
from chainframe.datasets._dataset import BlockRange, Dataset, RowChecks, build_arrow
from chainframe.datasets._proof import Proof
from chainframe.datasets._registry import datasets
from chainframe.rpc import InvalidParams, MethodNotFound, TerminalError

if TYPE_CHECKING:
    from chainframe.datasets._dataset import Dataset as _Dataset
    from chainframe.rpc import Pacing

REPLAY = "trace_replayBlockTransactions"
BLOCK_TRACER = "debug_traceBlockByNumber"
_PRESTATE_DIFF = {"tracer": "prestateTracer", "tracerConfig": {"diffMode": True}}
_ZERO_WORD = "0x" + "0" * 64

Field = Literal["balance", "nonce", "code", "storage"]
BlockLevel = Literal["system_calls", "withdrawals"]
"""Changes no transaction makes, read beside the diffs (neither route reports them): the system calls' storage
writes before a block's transactions, and the withdrawals credited after them."""

HISTORY = "0x0000f90827f1c53a10cb7a02335b175320002935"
"""EIP-2935's history contract: its system call writes the parent's hash at slot (N - 1) % 8191 of block N (on anvil
from genesis: every block's write is read there)."""
BEACON_ROOTS = "0x000f3df6d732807ef1319fb7b8bb8522d0beac02"
"""EIP-4788's beacon roots contract: the timestamp at slot ts % 8191, the parent beacon root at ts % 8191 + 8191
(anvil deploys no code there: no write, no row)."""
_RING = 8191
CHANGE_ORDER = {"system_call": 0, "transaction": 1, "withdrawal": 2}
"""Where a kind of change falls in its block: system calls before the transactions, withdrawals after them."""


def system_slots(number: int, header: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The (contract, slot) pairs block ``number``'s system calls may write; whether they did (the contract has code,
    the fork is active) is the node's state to say."""
    if number == 0:
        return []
    stamp = _quantity(header.get("timestamp")) % _RING
    return [(HISTORY, _word((number - 1) % _RING)), (BEACON_ROOTS, _word(stamp)), (BEACON_ROOTS, _word(stamp + _RING))]


SYSTEM_CONTRACTS = (HISTORY, BEACON_ROOTS)


def _live_slots(number: int, header: Mapping[str, Any], live: set[str]) -> list[tuple[str, str]]:
    return [(address, slot) for address, slot in system_slots(number, header) if address in live]


def withdrawn(header: Mapping[str, Any]) -> dict[str, int]:
    """Each account's wei credited by the block's withdrawals (their amounts are in gwei)."""
    found: dict[str, int] = {}
    for withdrawal in header.get("withdrawals") or []:
        address = str(withdrawal["address"]).lower()
        found[address] = found.get(address, 0) + _quantity(withdrawal["amount"]) * 10**9
    return found


async def _system_contracts(client: Any, last: int) -> set[str]:
    """The system contracts with code at block ``last``: neither can self-destruct, so one without code there had
    none before and its system call wrote nothing in the range (anvil deploys no EIP-4788 contract: four of a block's
    six slot reads saved, anvil's CPU serving storage_diffs on the benchmark chain 33.6 -> 17.1 s, docs/performance)."""
    codes = await batch_or_raise(client, [("eth_getCode", [a, hex(last)]) for a in SYSTEM_CONTRACTS])
    return {address for address, code in zip(SYSTEM_CONTRACTS, codes, strict=True) if code not in (None, "", "0x")}


async def _history_slots(client: Any, numbers: Sequence[int]) -> dict[int, tuple[Any, Any]] | None:
    """EIP-2935's slot of each block (its parent's hash, written by the block's system call) before and after it, from
    two eth_getProof of all the piece's slots: at the block before the piece and at its last block. The contract
    lets its system call alone write, block N slot (N - 1) % 8191 only, so no other block of a piece shorter than
    the ring writes it: its value before N is the one before the piece, after N the one at the piece's end. One proof
    of many slots costs anvil what one eth_getStorageAt does (1,000 slots at an old block: 0.03 CPU-s against 1.9 s
    read one by one). None: the node did not give them (then each slot is read at its two blocks)."""
    numbers = [n for n in numbers if n > 0]
    if not numbers or max(numbers) - min(numbers) + 1 >= _RING:
        return None if numbers else {}
    keys = [_word((n - 1) % _RING) for n in numbers]
    try:
        before, after = await batch_or_raise(
            client, [("eth_getProof", [HISTORY, keys, hex(at)]) for at in (min(numbers) - 1, max(numbers))]
        )
    except TerminalError:
        return None
    found: dict[int, tuple[Any, Any]] = {}
    for n, key, old, new in zip(numbers, keys, before["storageProof"], after["storageProof"], strict=True):
        if _quantity(old["key"]) != _quantity(key) or _quantity(new["key"]) != _quantity(key):
            raise DecodeError(f"eth_getProof of {HISTORY}: its storage proofs are not in the order of the keys asked")
        found[n] = (old["value"], new["value"])
    return found


async def _block_level(client: Any, found: list[dict[str, Any]], block_level: Sequence[BlockLevel]) -> None:
    """Adds to each block its header's part (timestamp, withdrawals) and the state its block-level changes are
    read from: each system call slot (of a contract with code) before and after the block (EIP-2935's for the whole
    piece at once, :func:`_history_slots`; else at the block before and at the block), each withdrawn account's
    balance at the block (withdrawals are credited last: the value before is that less the amount)."""
    numbers = [block["block"] for block in found]
    headers = await batch_or_raise(client, [("eth_getBlockByNumber", [hex(n), False]) for n in numbers])
    live = await _system_contracts(client, max(numbers)) if "system_calls" in block_level and numbers else set()
    history = await _history_slots(client, numbers) if HISTORY in live else None
    calls: list[tuple[str, list[Any]]] = []
    for block, header in zip(found, headers, strict=True):
        header = header or {}
        number = block["block"]
        block["header"] = {"timestamp": header.get("timestamp"), "withdrawals": header.get("withdrawals") or []}
        if "system_calls" in block_level:
            for address, slot in _live_slots(number, header, live):
                if address != HISTORY or history is None:
                    calls += [("eth_getStorageAt", [address, slot, hex(at)]) for at in (number - 1, number)]
        if "withdrawals" in block_level:
            calls += [("eth_getBalance", [address, hex(number)]) for address in withdrawn(header)]
    answers = iter(await batch_or_raise(client, calls) if calls else [])
    for block in found:
        number, header = block["block"], block["header"]
        if "system_calls" in block_level:
            block["system"] = []
            for address, slot in _live_slots(number, header, live):
                read = history[number] if address == HISTORY and history is not None else None
                before, after = read if read is not None else (next(answers), next(answers))
                block["system"].append({"address": address, "slot": slot, "before": before, "after": after})
        if "withdrawals" in block_level:
            block["withdrawn"] = [
                {"address": address, "amount": amount, "after": next(answers)}
                for address, amount in withdrawn(header).items()
            ]


async def fetch_diffs(
    client: Any,
    blocks: BlockRange,
    *,
    dataset: str,
    block_level: Sequence[BlockLevel] = (),
    replay_gap: str | None = None,
) -> list[bytes]:
    """The blocks' state diffs by the first route the node serves, as ``{"route", "numbers", "blocks", "answers"}``:
    the route's batch answers as received (one result a block, in ``numbers``' order by their ids), and in
    ``blocks`` each block's block-level changes asked for. ``replay_gap``: what the replay route may leave out, said
    in the run's summary (the client's notes) where that route served."""
    found: list[dict[str, Any]] = [{"block": n} for n in blocks] if block_level else []
    try:
        async with anyio.create_task_group() as tg:
            if block_level:  # beside the diffs, not after them: the same state, round trips of their own
                tg.start_soon(_block_level, client, found, block_level)
            method, answers = await _diffs(client, blocks, dataset=dataset)
    except BaseExceptionGroup as group:  # the typed error (MethodNotFound), as a caller catches it
        raise first_error(group) from None
    notes = getattr(client, "notes", None)
    if replay_gap is not None and method == REPLAY and isinstance(notes, dict):
        notes[f"replay gap {dataset}"] = replay_gap
    return [_document({"route": method, "numbers": list(blocks), "blocks": found, "answers": answers})]


async def _diffs(client: Any, blocks: BlockRange, *, dataset: str) -> tuple[str, list[bytes]]:
    """The route that served the blocks' diffs, and its batch answers as received."""
    tried: dict[str, str] = {}
    known = getattr(client, "missing_methods", {})
    for method, params in ((REPLAY, ["stateDiff"]), (BLOCK_TRACER, _PRESTATE_DIFF)):
        if method in known:
            tried[method] = known[method]
            continue
        try:
            # The answers as received, spliced into the document unparsed and read once by the transform: parsing
            # them here and writing them out again cost two of three passes over the JSON (as for trace_block).
            return method, list(await client.batch_bytes([(method, [hex(n), params]) for n in blocks]))
        except (MethodNotFound, InvalidParams) as exc:
            if isinstance(exc, InvalidParams) and method == REPLAY:
                raise
            tried[method] = f"{exc.detail} [{exc.code}]" if exc.code is not None else exc.detail
    said = "; ".join(f"{m}: {answer}" for m, answer in tried.items())
    raise MethodNotFound(
        f"{dataset} needs state diffs and the node serves neither trace_replayBlockTransactions (stateDiff) nor "
        f"debug_traceBlockByNumber (prestateTracer, diffMode) ({said}); a node with the trace or debug API (geth, "
        "Erigon, Reth, Nethermind, anvil) serves them"
    )


def _results(answer: Mapping[str, Any]) -> list[Any]:
    """Each block's result (its transactions' diffs), in ``numbers``' order: each batch's answers by their ids."""
    found = batch_results(answer["answers"])
    if len(found) != len(answer["numbers"]):
        raise DecodeError(f"{answer['route']}: {len(found)} answers for {len(answer['numbers'])} blocks")
    return found


# --- answers to changes (pure) ---


def _quantity(value: Any) -> int:
    """A node's number: hex text, or a JSON number (geth's and anvil's prestate nonces)."""
    if value is None:
        return 0
    return value if isinstance(value, int) else int(str(value), 16)


def _word(value: Any) -> str:
    return "0x" + format(_quantity(value), "064x")


def _parity_change(entry: Any) -> tuple[Any, Any] | None:
    """A parity diff entry as (before, after); None: unchanged. A born value had none before, a dead one none
    after (None: the field's zero)."""
    if entry.__class__ is not dict:
        return None  # "="
    if "*" in entry:
        return entry["*"].get("from"), entry["*"].get("to")
    if "+" in entry:
        return None, entry["+"]
    if "-" in entry:
        return entry["-"], None
    return None


Change = tuple[str, str | None, Any, Any]
"""An address, the slot (storage only), and the values before and after as the node wrote them."""


def _parity_changes(diff: Mapping[str, Any], field: Field) -> Iterator[Change]:
    """A transaction's changes of ``field`` in its parity state diff: only that field of each account is read."""
    if field == "storage":
        for address, account in diff.items():
            for slot, entry in (account.get("storage") or {}).items():
                change = _parity_change(entry)
                if change is not None:
                    yield address, slot, change[0], change[1]
        return
    for address, account in diff.items():
        entry = account.get(field)
        if entry.__class__ is dict:  # else "=": unchanged
            change = _parity_change(entry)
            if change is not None:
                yield address, None, change[0], change[1]


def _prestate_changes(result: Mapping[str, Any], field: Field) -> Iterator[Change]:
    pre, post = result.get("pre") or {}, result.get("post") or {}
    for address in dict.fromkeys([*pre, *post]):
        before, after = pre.get(address) or {}, post.get(address)
        destroyed = address in pre and after is None
        after = after or {}
        if field != "storage":
            old = before.get(field)
            yield address, None, old, None if destroyed else after.get(field, old)
            continue
        slots, written = before.get("storage") or {}, {} if destroyed else after.get("storage") or {}
        for slot in dict.fromkeys([*slots, *written]):
            yield address, slot, slots.get(slot), written.get(slot)


Located = tuple[int, int | None, str | None, str, Change]
"""A change with its block, transaction index and hash (none for a block-level change) and kind."""


def changes(bodies: Sequence[bytes], field: Field) -> Iterator[Located]:
    """Every change of ``field`` by every transaction, by block, transaction index, hash and kind, and the
    block-level ones read beside them (no index, no hash) in their place in the block (values may still be equal:
    the prestate route lists what a transaction touched, a system call may write what was there)."""
    for body in bodies:
        answer = json.loads(body)
        parity = answer["route"] == REPLAY
        level = {block["block"]: block for block in answer["blocks"]}
        for number, txs in zip(answer["numbers"], _results(answer), strict=True):
            block = level.get(number, {})
            for system in block.get("system", ()):
                if field == "storage":
                    change: Change = (system["address"], system["slot"], system["before"], system["after"])
                    yield number, None, None, "system_call", change
            for index, tx in enumerate(txs or ()):
                if parity:
                    found = _parity_changes(tx.get("stateDiff") or {}, field)
                    hash_ = tx.get("transactionHash")
                else:
                    found = _prestate_changes(tx.get("result") or {}, field)
                    hash_ = tx.get("txHash")
                for change in found:
                    yield number, index, hash_, "transaction", change
            for credit in block.get("withdrawn", ()):
                if field == "balance":
                    after = _quantity(credit["after"])
                    yield number, None, None, "withdrawal", (credit["address"], None, after - credit["amount"], after)


def _code(value: Any) -> str:
    return str(value or "0x")


_NORMAL: dict[Field, Callable[[Any], Any]] = {"balance": _quantity, "nonce": _quantity, "storage": _quantity,
                                              "code": _code}  # fmt: skip
_VALUES: dict[str, Callable[[list[Any], str], pa.Array]] = {
    "wei": _buffers.wei,
    "word": _buffers.words,
    "u64": _buffers.u64,
    "data": _buffers.binary_hex,
}
"""A value column's arrays by its kind, from the normalised values (integers; hex text for code)."""


class StateDiffs(Dataset):
    """One field's changes, from the blocks' state diffs (see the module)."""

    field: ClassVar[Field]
    """Which of an account's fields its rows follow."""
    before: ClassVar[str]
    after: ClassVar[str]
    method = REPLAY
    # trace_replayBlockTransactions(N, ["stateDiff"]): a block's diffs, one call, which the four diff datasets of a
    # run share, and so the debug_traceBlockByNumber route's (engine._shared.reads; its params as a kind holds them).
    block_params = (("stateDiff",),)
    block_fallbacks = ((BLOCK_TRACER, ((("tracer", "prestateTracer"), ("tracerConfig", (("diffMode", True),))),)),)
    # The probe's checks of the two routes, each asked as it is read here (at block 0, cheap everywhere).
    routes = ((f"{REPLAY} stateDiff",), (f"{BLOCK_TRACER} prestateTracer diffMode",))
    fetched_with = (
        "trace_replayBlockTransactions with ['stateDiff'] per block; where the node lacks it, "
        "debug_traceBlockByNumber with prestateTracer in diff mode; balance_diffs and storage_diffs read the blocks' "
        "headers too, for the withdrawals (eth_getBalance of each withdrawn account) and the system calls "
        "(EIP-2935's slots with an eth_getProof before and one after each piece, EIP-4788's where its contract has "
        "code with eth_getStorageAt at the block and the one before)"
    )
    chunk_size = 100
    reads_state = True
    state_before = 1  # a replay starts from the state before each block
    sort: tuple[str, ...] = ("block_number", "transaction_index", "address")
    proof: ClassVar[Proof | None]
    block_level: ClassVar[tuple[BlockLevel, ...]] = ()
    """The changes no transaction makes that touch this field, read beside the diffs as rows of their kind."""
    change_order: ClassVar[Mapping[str, int]] = CHANGE_ORDER
    replay_gap: ClassVar[str | None] = None
    """What trace_replayBlockTransactions' stateDiff is known to leave out of this field, said in the summary of a run
    it served (``--verify`` proves the rows add up, and fails naming the account)."""
    unprovable = {
        "transaction_index": "which transaction made a change is read from replays, which no header field commits to; "
        "the changes are proven to add up from the state at the previous block to the state at the block",
        "transaction_hash": "read from replays, as transaction_index",
        "change_type": "read from replays, as transaction_index",
    }

    def other_calls(self, blocks: int, filters: Mapping[str, Any], pacing: Pacing | None = None) -> dict[str, int]:
        """The headers of the blocks, for their block-level changes, and for the system calls each piece's two
        eth_getCode and two eth_getProof of EIP-2935's slots (EIP-4788's two slots are read only where its contract
        has code: four more a block, not counted; a withdrawn account's balance, one per account a block's
        withdrawals credit, depends on the headers: not counted)."""
        if not self.block_level:
            return {}
        found = {"eth_getBlockByNumber": blocks}
        if "system_calls" in self.block_level:
            pieces = -(-blocks // self.chunk_size)
            found["eth_getProof"] = 2 * pieces
            found["eth_getCode"] = 2 * pieces
        return found

    async def fetch(self, client: Any, blocks: BlockRange, **filters: Any) -> list[bytes]:
        return await fetch_diffs(
            client, blocks, dataset=self.name, block_level=self.block_level, replay_gap=self.replay_gap
        )

    def columns_of(self, bodies: Sequence[bytes]) -> dict[str, list[Any]]:
        """The changes of this dataset's field whose values differ, column by column (values normalised: integers,
        hex text for code), in the dataset's order: a block-level change's null index first, as the engine sorts,
        so that its check finds them sorted and it needs no sort of its own (Polars': 0.3 CPU-s to import)."""
        normal = _NORMAL[self.field]
        found: list[tuple[Any, ...]] = []
        for number, index, hash_, kind, (address, slot, old, new) in changes(bodies, self.field):
            if old == new and old is not None:  # the same text: the same value
                continue
            old, new = normal(old), normal(new)
            if old == new:
                continue
            key = (number, -1 if index is None else index, address.lower(),
                   "" if slot is None else slot[2:].lower().rjust(64, "0"))  # fmt: skip
            found.append((key, number, index, hash_, kind, address, slot, old, new))
        if any(found[k][0] > found[k + 1][0] for k in range(len(found) - 1)):
            found.sort(key=lambda row: row[0])  # stable: a block's own order among equal keys
        names = ("block_number", "transaction_index", "transaction_hash", "change_type", "address", "storage_key",
                 self.before, self.after)  # fmt: skip
        columns = list(zip(*found, strict=True))[1:] if found else [()] * len(names)
        return {name: list(values) for name, values in zip(names, columns, strict=True)}

    def transform(self, bodies: Sequence[bytes], *, chain_id: int, u256: U256 = "decimal") -> pa.Table:
        found = self.columns_of(bodies)
        n = len(found["block_number"])
        arrays = {
            "block_number": _buffers.u64(found["block_number"], "block_number"),
            "transaction_index": _buffers.u64(found["transaction_index"], "transaction_index"),
            "transaction_hash": _buffers.fixed_hex(found["transaction_hash"], 32, "transaction_hash"),
            "change_type": _buffers.strings(found["change_type"]),
            "address": _buffers.fixed_hex(found["address"], 20, "address"),
        }
        if "storage_key" in self.columns:
            arrays["storage_key"] = _buffers.fixed_hex(found["storage_key"], 32, "storage_key")
        for column in (self.before, self.after):
            arrays[column] = _VALUES[COLUMNS[column].kind_for(u256)](found[column], column)
        return build_arrow(arrays, self.columns, n, chain_id=chain_id, u256=u256)


class StateDiffsProof(Proof):
    """The diffs add up to proven state (see the module)."""

    doc = (
        "the state roots of the block and the one before: each touched account's (and slot's) first value before "
        "and last value after, through eth_getProof; within the block each change starts where the previous ended"
    )
    uncounted = (
        "the state diffs' proofs, an eth_getProof per account (with its slots) each block touches, at the block and "
        "the one before"
    )
    check = "chainframe.verify:prove_state_diffs"

    async def material(
        self,
        client: Any,
        dataset: _Dataset,
        blocks: BlockRange,
        *,
        stored: pa.Table | None = None,
        filters: Mapping[str, Any],
        answers: Sequence[bytes] | None = None,
    ) -> dict[_Dataset, list[bytes]]:
        """The headers of the blocks and the one before them, and eth_getProof of every account (with its slots)
        the rows touch, and every one a block-level change may touch (the system calls' slots, the withdrawn
        accounts, from the headers), at each block touched and the one before. The diffs are read from the rows'
        own answers in an extraction, fetched again for stored rows."""
        blocks_ = datasets()["blocks"]
        before = BlockRange(max(0, blocks.start - 1), blocks.end)
        found: dict[_Dataset, list[bytes]] = {blocks_: await blocks_.fetch(client, before)}
        # The node's diffs name what it says changed: a stored row removed still has its account proven.
        bodies = answers if answers is not None else await dataset.fetch(client, blocks)
        wanted = _merged(touched(dataset.transform(bodies, chain_id=0)), _block_level_touched(dataset, bodies))
        if stored is not None:
            wanted = _merged(wanted, touched(stored))
        calls, contexts = [], []
        for number, address, keys in wanted:
            for at in (number - 1, number) if number else (number,):
                calls.append(("eth_getProof", [address, keys, hex(at)]))
                contexts.append({"block": at})
        found[dataset] = [await fetch_with_context(client, calls, contexts)] if calls else []
        return found


def touched(rows: pa.Table) -> list[tuple[int, str, list[str]]]:
    """Each (block, account) the rows touch, with the slots touched (storage rows), in block order."""
    keyed = "storage_key" in rows.column_names and rows.num_rows and rows["storage_key"].null_count < rows.num_rows
    found: dict[tuple[int, str], dict[str, None]] = {}
    columns = [rows["block_number"].to_pylist(), rows["address"].to_pylist()]
    keys = rows["storage_key"].to_pylist() if keyed else [None] * rows.num_rows
    for number, address, key in zip(*columns, keys, strict=True):
        slots = found.setdefault((number, "0x" + bytes(address).hex()), {})
        if key is not None:
            slots["0x" + bytes(key).hex()] = None
    return [(n, a, list(s)) for (n, a), s in sorted(found.items())]


def _block_level_touched(dataset: _Dataset, bodies: Sequence[bytes]) -> list[tuple[int, str, list[str]]]:
    """What the blocks' system calls and withdrawals may change, from their headers: proven whether or not a row
    says so, so that a change without its row fails as any other."""
    level: Sequence[BlockLevel] = getattr(dataset, "block_level", ())
    found: list[tuple[int, str, list[str]]] = []
    for body in bodies:
        for block in json.loads(body)["blocks"]:
            number, header = block["block"], block.get("header") or {}
            if "system_calls" in level:
                slots: dict[str, list[str]] = {}
                for address, slot in system_slots(number, header):
                    slots.setdefault(address, []).append(slot)
                found += [(number, address, keys) for address, keys in slots.items()]
            if "withdrawals" in level:
                found += [(number, address, []) for address in withdrawn(header)]
    return found


def _merged(*lists: list[tuple[int, str, list[str]]]) -> list[tuple[int, str, list[str]]]:
    found: dict[tuple[int, str], dict[str, None]] = {}
    for listed in lists:
        for number, address, keys in listed:
            found.setdefault((number, address), {}).update(dict.fromkeys(keys))
    return [(n, a, list(s)) for (n, a), s in sorted(found.items())]


PROOF = StateDiffsProof()


class BalanceDiffs(StateDiffs):
    name = "balance_diffs"
    doc = "Each transaction's changes of account balances (wei): one row per block, transaction and account changed."
    columns = ("chain_id", "block_number", "transaction_index", "transaction_hash", "change_type", "address",
               "balance_before", "balance_after")  # fmt: skip
    field = "balance"
    before, after = "balance_before", "balance_after"
    block_level = ("withdrawals",)
    unreported_rewards = (
        "a block before the merge (difficulty > 0) credits its miner, and its uncles' miners, a reward after its last "
        "transaction that neither trace_replayBlockTransactions' stateDiff nor prestateTracer reports: their last "
        "value after and unexplained changes are not checked (the miner's; every account's in a block with uncles, "
        "whose miners are in uncle headers not read)"
    )
    """Why a pre-merge block's rewarded accounts are not proven at the block (read by the verifier)."""
    replay_gap = (
        "balance_diffs read by trace_replayBlockTransactions (stateDiff), which may leave out an account that held "
        "ether before a CREATE2 made and destroyed it in one transaction (anvil 1.7.1 does): --verify proves each "
        "block's balances add up and names such an account"
    )
    row_checks = RowChecks(keys=("block_number", "address", "balance_before", "balance_after"))
    proof = PROOF


class NonceDiffs(StateDiffs):
    name = "nonce_diffs"
    doc = "Each transaction's changes of account nonces: one row per block, transaction and account changed."
    columns = ("chain_id", "block_number", "transaction_index", "transaction_hash", "change_type", "address",
               "nonce_before", "nonce_after")  # fmt: skip
    field = "nonce"
    before, after = "nonce_before", "nonce_after"
    row_checks = RowChecks(keys=("block_number", "address", "nonce_before", "nonce_after"))
    proof = PROOF


class CodeDiffs(StateDiffs):
    name = "code_diffs"
    doc = "Each transaction's changes of account code (created, destroyed): one row per block, transaction, account."
    columns = ("chain_id", "block_number", "transaction_index", "transaction_hash", "change_type", "address",
               "code_before", "code_after")  # fmt: skip
    field = "code"
    before, after = "code_before", "code_after"
    row_checks = RowChecks(keys=("block_number", "address", "code_before", "code_after"))
    proof = PROOF


class StorageDiffs(StateDiffs):
    name = "storage_diffs"
    doc = "Each transaction's changes of storage slots: one row per block, transaction, account and slot changed."
    columns = ("chain_id", "block_number", "transaction_index", "transaction_hash", "change_type", "address",
               "storage_key", "storage_value_before", "storage_value_after")  # fmt: skip
    sort = ("block_number", "transaction_index", "address", "storage_key")
    field = "storage"
    before, after = "storage_value_before", "storage_value_after"
    block_level = ("system_calls",)
    row_checks = RowChecks(keys=("block_number", "address", "storage_key"))
    proof = PROOF


BALANCE_DIFFS = BalanceDiffs()
NONCE_DIFFS = NonceDiffs()
CODE_DIFFS = CodeDiffs()
STORAGE_DIFFS = StorageDiffs()
