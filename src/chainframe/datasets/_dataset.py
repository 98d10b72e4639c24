"""What a dataset is: its columns (from the one table), its sort order, how it is fetched, and a pure transform from
answer bytes to an Arrow table.

Fetching is kept apart from transforming: ``fetch`` returns the answers as received, ``transform`` is a pure function
of those bytes (so a chunk can be re-decoded, tested on recorded answers, or run in a worker thread).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, ClassVar

import pyarrow as pa

from chainframe import _kernels as pc
from chainframe._kernels import constant
from chainframe.datasets._columns import COLUMNS, U256, schema
from chainframe.datasets._convert import convert_frame, read_dtype
from chainframe.datasets._inputs import Input, check_inputs
from chainframe.datasets._proof import Proof

if TYPE_CHECKING:
    import polars as pl

    from chainframe.rpc import Pacing
else:
    from chainframe._lazy import polars as pl


@dataclass(frozen=True)
class BlockRange:
    """Blocks ``start`` to ``end``, both included."""

    start: int
    end: int

    def __post_init__(self) -> None:
        if not 0 <= self.start <= self.end:
            raise ValueError(f"a block range needs 0 <= start <= end; got {self.start}..{self.end}")

    def __iter__(self) -> Any:
        return iter(range(self.start, self.end + 1))

    def __len__(self) -> int:
        return self.end - self.start + 1


def spread_blocks(ranges: Sequence[BlockRange], count: int) -> list[int]:
    """``count`` blocks spread evenly over ``ranges`` (in their order; fewer where two fall on one), ascending, each
    shifted by its index: a chain whose blocks repeat a pattern (every Nth busy) is not always sampled at the same
    place in it. What ``--dry`` reads of a range to predict what only its blocks can tell."""
    total = sum(map(len, ranges))
    picked: set[int] = set()
    for i in range(count if total else 0):
        at = min(total - 1, (2 * i + 1) * total // (2 * count) + i)
        for r in ranges:
            if at < len(r):
                picked.add(r.start + at)
                break
            at -= len(r)
    return sorted(picked)


class Fetch(Enum):
    """How the engine fetches a dataset's blocks."""

    PIECES = "pieces"
    """The dataset's own :meth:`Dataset.fetch`, over pieces of blocks sized by the answers."""
    LOGS = "logs"
    """eth_getLogs over ranges split on providers' limits (a block over them read from its receipts), the rows
    then made by :meth:`Dataset.from_logs`."""


@dataclass(frozen=True)
class RowChecks:
    """How a piece's rows are checked as an answer to what was asked (:mod:`chainframe.engine._answers`)."""

    keys: tuple[str, ...]
    """Columns no row may lack."""
    index: str | None = None
    """Per block 0, 1, 2, ... with no gap or repeat (with log filters: no repeat)."""
    one_per_block: bool = False
    """Exactly one row per asked block."""
    status: bool = False
    """Each row has a status or, before Byzantium, a state root (receipts)."""


class Dataset(ABC):
    """One dataset, declared whole: what it stores (columns, sort), what it takes, how it is fetched and checked,
    how it is proven, and its docs. Engine, CLI, verification and docs read these attributes; no other module keeps
    a table keyed by dataset name. Subclasses set the class attributes and implement ``fetch`` and ``transform``."""

    name: str
    aliases: ClassVar[tuple[str, ...]] = ()
    """Other names it answers to, such as cryo's (``txs``, ``events``): a command line written for cryo runs as
    typed. The series folder and the report use :attr:`name`."""
    columns: tuple[str, ...]
    sort: tuple[str, ...]
    doc: str
    fetched_with: ClassVar[str]
    """How it is fetched, in words (``chainframe schema``)."""
    method: ClassVar[str]
    """The JSON-RPC method its answers come from: named in errors, priced by ``--dry``."""
    block_params: ClassVar[tuple[Any, ...] | None] = None
    """Where each block's answer is one call of ``method`` (the block's number, then these parameters), as a block's
    headers, bodies and receipts are: the datasets of a run that verifies share those answers (one's rows are
    another's proof). None: its answers are not a block's whole."""
    block_fallbacks: ClassVar[tuple[tuple[str, tuple[Any, ...]], ...]] = ()
    """Other calls that answer a block's whole for it where a node lacks ``method``: each a method and its parameters
    after the block's number (lists as tuples, mappings as their sorted items), shared between the datasets of a run
    as :attr:`block_params` is."""
    routes: ClassVar[tuple[tuple[str, ...], ...]] = ()
    """The ways a node can serve it, best first, each the methods it needs (``debug_traceCall callTracer`` for a
    tracer): what ``chainframe probe`` checks. Empty: ``method`` alone."""
    reads_state: ClassVar[bool] = False
    """Reads the state at each block: an old block needs a node that keeps history (an archive)."""
    state_before: ClassVar[int] = 0
    """How many blocks before each asked block the state it reads is (a replay starts from its parent's: 1): a run
    starting below the node's oldest state plus this is refused before any work (``engine._state_window``)."""
    fetched: ClassVar[Fetch] = Fetch.PIECES
    chunk_size: ClassVar[int] = 1000
    """Blocks per file by default."""
    inputs: ClassVar[tuple[Input, ...]] = ()
    """The filters and inputs it takes; anything else is refused before any request."""
    needs: ClassVar[frozenset[str]] = frozenset()
    """The inputs it cannot do without."""
    per_block: ClassVar[str | None] = None
    """The input whose values each cost a call per block (an account, a traced call); None: one call per block."""
    null_checked: ClassVar[bool] = False
    """Its answers must never hold a null result (a block, a list of receipts or logs was asked for)."""
    row_checks: ClassVar[RowChecks | None] = None
    """How its rows are checked as answers; None: no check beyond the transform's."""
    row_hashed: ClassVar[bool] = False
    """Its ``block_hash`` column is the hash of the block holding the row: checked row by row near the head."""
    block_column: ClassVar[str] = "block_number"
    """The column that says which block a row belongs to (its chunk's range is of this column)."""
    proof: ClassVar[Proof | None] = None
    """What proves its rows, declared (:mod:`chainframe.datasets._proof`): what it reads, what it proves and its
    check, which the engine and ``verify`` run as declared; None: nothing can (then ``unprovable`` names every
    column)."""
    unprovable: ClassVar[Mapping[str, str]] = {}
    """Columns no check proves against the chain, each with why (``chainframe schema`` lists them); every other
    column is proven by ``verify`` from a header hash, a root, the bloom, a signature or derivation."""
    derived_from: ClassVar[tuple[Dataset, ...]] = ()
    """:attr:`Proof.DERIVED`: the datasets its rows are computed from (receipts with their logs), proven first."""
    derived_fetched: ClassVar[tuple[Dataset, ...] | None] = None
    """:attr:`Proof.DERIVED`: those of ``derived_from`` its own fetch reads (None: all of them); its proof reads the
    others itself, in an extraction too."""

    @property
    def fetched_from(self) -> tuple[Dataset, ...]:
        """The datasets whose answers its own fetch reads: ``derived_fetched``, else all of ``derived_from``."""
        return self.derived_from if self.derived_fetched is None else self.derived_fetched

    def all_routes(self) -> tuple[tuple[str, ...], ...]:
        return self.routes or ((self.method,),)

    def check_inputs(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """``given`` filters and inputs checked, in the JSON-able form a series' name and a task carry; anything it
        does not take, or lacks, refused with :class:`~chainframe.InputError`."""
        return check_inputs(self.name, self.inputs, self.needs, given)

    def calls(self, blocks: int, filters: Mapping[str, Any]) -> int | None:
        """The calls of :attr:`method` ``blocks`` blocks take (``--dry``); None: it depends on the answers (log
        ranges)."""
        return blocks * (len(filters[self.per_block]) if self.per_block else 1)

    def other_calls(self, blocks: int, filters: Mapping[str, Any], pacing: Pacing | None = None) -> dict[str, int]:
        """The calls of other methods ``blocks`` blocks take beside :attr:`method`'s, by method (``--dry`` counts
        and prices them at their own weights): a receipts batch read with the blocks, say. ``pacing``: the run's,
        where the dataset picks what it reads by its price table."""
        return {}

    def paced_reads(self, pacing: Pacing | None) -> frozenset[tuple[str, tuple[Any, ...]]]:
        """Calls per block whose answers are a block's whole that the dataset reads beside :attr:`block_params` and
        :attr:`block_fallbacks` under ``pacing`` (a route its price table picks): each a method and its parameters
        after the block's number, shared between the datasets of a run as those are."""
        return frozenset()

    async def sampled_calls(
        self, client: Any, chunks: Sequence[BlockRange], pacing: Pacing | None = None
    ) -> dict[str, int] | None:
        """As :meth:`other_calls` for ``chunks``, where what the dataset reads beside its method depends on the
        blocks' content (not on a series' filters: ``--dry`` asks once for all series of a dataset over the same
        blocks), predicted from a few of them asked of the node; None: :meth:`other_calls` stands."""
        return None

    def log_filter(self, filters: Mapping[str, Any]) -> dict[str, Any]:
        """The eth_getLogs filter for a :attr:`Fetch.LOGS` dataset's ``filters``."""
        raise NotImplementedError(f"{self.name} is not fetched with eth_getLogs")

    def from_logs(self, logs: pa.Table, filters: Mapping[str, Any], *, u256: U256 = "decimal") -> pa.Table:
        """A :attr:`Fetch.LOGS` dataset's rows from the logs its filter fetched."""
        raise NotImplementedError(f"{self.name} is not fetched with eth_getLogs")

    async def proof_answers(self, client: Any, blocks: BlockRange, filters: Mapping[str, Any]) -> list[bytes]:
        """A :attr:`Proof.STATE` dataset's eth_getProof answers for its rows of ``blocks``, each result beside its
        block (as :func:`~chainframe.datasets._context.fetch_with_context` writes them)."""
        raise NotImplementedError(f"{self.name} is not proven through eth_getProof")

    @property
    def schema(self) -> pa.Schema:
        return schema(self.columns)

    def schema_for(self, u256: U256) -> pa.Schema:
        return schema(self.columns, u256)

    @abstractmethod
    async def fetch(self, client: Any, blocks: BlockRange, **filters: Any) -> list[bytes]:
        """The answers (as received) that ``transform`` needs for these blocks."""

    @abstractmethod
    def transform(self, bodies: Sequence[bytes], *, chain_id: int, u256: U256 = "decimal") -> pa.Table:
        """Answers to rows: pure, vectorized. ``u256`` picks how wei columns are stored (see the type rules)."""

    def inputs_of(self, bodies: Sequence[bytes]) -> tuple[list[bytes], list[bytes]]:
        """:attr:`Proof.DERIVED`: its answers split into the transactions' answers and the receipts'."""
        raise NotImplementedError(f"{self.name} is not derived from other datasets")

    def derive(
        self, transactions: pa.Table, receipts: pa.Table | None, logs: pa.Table | None, *, chain_id: int
    ) -> pa.Table:
        """:attr:`Proof.DERIVED`: its rows computed from those datasets' rows (receipts and logs: None unless it is
        derived from receipts)."""
        raise NotImplementedError(f"{self.name} is not derived from other datasets")

    def schema_with(self, filters: Mapping[str, Any], u256: U256 = "decimal") -> pa.Schema:
        """The schema of its rows extracted with ``filters`` (a filter may add columns)."""
        return self.schema_for(u256)

    def chunk_size_for(self, filters: Mapping[str, Any]) -> int:
        """A new series' blocks per chunk file with ``filters``: :attr:`chunk_size`, or more where the filters keep
        few of the rows a chunk reads (a stored series keeps the size its files were written with)."""
        return self.chunk_size

    keeps_by: ClassVar[tuple[str, ...]] = ()
    """The filters that only choose which of the fetched rows :meth:`kept_rows` keeps (``function``): series that
    differ only in them read the same rows, once (:mod:`chainframe.engine._pieces`)."""

    def selects(self, filters: Mapping[str, Any]) -> bool:
        """Whether :meth:`kept_rows` keeps only some rows with ``filters`` (then a stored series is proven by proving
        the node's raw rows and keeping them so)."""
        return False

    def kept_rows(self, table: pa.Table, filters: Mapping[str, Any], *, u256: U256 = "decimal") -> pa.Table:
        """The rows it keeps of a piece's checked and proven rows: a filter may select and decode them (``function=``
        keeps the calls of its functions, :mod:`chainframe.datasets._function_calls`); none: all of them."""
        return table

    def kept_rows_each(
        self, table: pa.Table, filters: Sequence[Mapping[str, Any]], *, u256: U256 = "decimal"
    ) -> list[pa.Table]:
        """The rows each of ``filters`` keeps of the same piece (series that differ only in :attr:`keeps_by`, read once
        for all: :mod:`chainframe.engine._pieces`), as :meth:`kept_rows` gives them; a dataset may choose them in one
        pass."""
        return [self.kept_rows(table, each, u256=u256) for each in filters]

    def empty(self, u256: U256 = "decimal") -> pa.Table:
        return pc.empty_table(self.schema_for(u256))


def read_fields(sources: Mapping[str, str]) -> dict[str, pl.DataType]:
    """The JSON keys to read for a column -> key mapping, each as text of the right shape."""
    return {key: read_dtype(COLUMNS[column].kind) for column, key in sources.items()}


def build(
    frame: pl.DataFrame,
    sources: Mapping[str, str],
    columns: tuple[str, ...],
    *,
    chain_id: int,
    u256: U256 = "decimal",
    extra: Mapping[str, pa.Array] | None = None,
) -> pa.Table:
    """Convert ``frame`` (JSON keys as text) into a table of ``columns``: sourced ones converted, ``chain_id`` and
    ``block_time`` derived, ``extra`` ones given; anything else is null (the node did not send it)."""
    n = frame.height
    kinds = {column: (key, COLUMNS[column].kind_for(u256)) for column, key in sources.items()}
    out: dict[str, pa.Array] = {**convert_frame(frame, kinds, block_key=sources.get("block_number")), **(extra or {})}
    return build_arrow(out, columns, n, chain_id=chain_id, u256=u256)


def build_arrow(
    out: Mapping[str, pa.Array], columns: tuple[str, ...], n: int, *, chain_id: int, u256: U256 = "decimal"
) -> pa.Table:
    """Typed arrays -> the dataset's table: ``chain_id`` and ``block_time`` derived, missing columns null."""
    out = dict(out)
    out["chain_id"] = constant(chain_id, n, pa.uint64())
    if "block_time" in columns:
        seconds = out.get("block_timestamp", out.get("timestamp"))
        if seconds is not None:
            out["block_time"] = pc.cast(pc.cast(seconds, pa.int64()), pa.timestamp("s", tz="UTC"))
    target = schema(columns, u256)
    arrays = []
    for field in target:
        given = out.get(field.name)
        arrays.append(pa.nulls(n, field.type) if given is None else pc.cast(given, field.type))
    return pa.Table.from_arrays(arrays, schema=target)
