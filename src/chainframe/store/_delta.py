"""Series as Delta Lake tables (``deltalake``, delta-rs): the same chunk files, made visible by fenced commits.

A Delta series folder holds ``_delta_log/`` and ``data/``. Every chunk file is written whole under a name of its own
(``data/<dataset>__<chain>__<slot start>_to_<slot end>__<token>.parquet``), never replaced in place, and is part of
the table only once a commit of the transaction log names it. Replacing a slot (a tip extended, a reorg repaired) is
one commit that removes the slot's old file and adds its new one; a reader holds a snapshot (a version) and keeps
reading it, however many commits land meanwhile, until ``vacuum`` removes files older than its retention.

The chunk files keep their footers exactly as in the plain layout (:class:`~chainframe.store.ChunkMeta`: range,
hashes for reorg checks, filters, redacted endpoint), so listing a table's files from its log is all the store needs
to load a series (:func:`table_files`): info, repair, verify and follow work unchanged.

**Fencing.** Only a run's coordinator commits; workers write files and hand them back (:class:`Written`). Each run
*claims* every table it may write at its start: an empty commit carrying Delta's application transaction
``(chainframe, epoch)``, with ``epoch`` one above the table's last. delta-rs refuses a commit whose snapshot is older
than a winning commit with the same application id (``CommitFailedError``), but it happily rebases a commit made from
a *refreshed* snapshot, whatever its epoch: so the writer commits only from the snapshot it last committed or
checked, and after every refresh checks that the table's epoch is still its own. A run that was killed, paused or cut
off while another claimed the table can then write files, but never make them visible: it gets :class:`Superseded`.

Types: a Delta schema has no unsigned integers, fixed-size binaries or second-precision timestamps. The table's
declared schema maps them (:func:`delta_schema`: ``uint64`` -> long, ``fixed_size_binary`` -> binary, any timestamp
-> microseconds UTC). The data files hold every ``uint64`` as ``int64`` with the same bits, as declared, and the rest
in chainframe's exact types, which Delta readers widen themselves (:mod:`chainframe.store._file_types`); chainframe's
readers (``scan``, ``open_duckdb``, the engine's) give the exact types back from each file's footer, so every column
has the same type in both layouts. Other Delta readers (Polars' ``scan_delta``, deltalake, Spark, Trino) read the
declared types.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa

from chainframe._errors import InputError
from chainframe._redact import redact_text
from chainframe.store._backends import storage
from chainframe.store._chunks import DATASET_NAME, BlockSpan, Written
from chainframe.store._s3 import s3_storage
from chainframe.store._storage import Entry, Location, ObjectPath, StoreError, Superseded, location

CHECKPOINT_INTERVAL = 10
"""Commits between two checkpoints of a table's log (delta-rs' default is 100): whoever opens the table reads the last
checkpoint and the commits after it, and a run makes one claim and about one commit per chunk, so with 100 every
open read up to 100 JSON objects (on S3, one GET each: runs and readers of a prefix got slower commit by commit)."""
Layout = Literal["parquet", "delta"]
LAYOUTS: tuple[Layout, ...] = ("parquet", "delta")
LOG = "_delta_log"
DATA = "data"
APP_ID = "chainframe"
"""The application id of chainframe's fencing transactions (one per table; its version is the writing run's
epoch)."""


def _deltalake() -> Any:
    try:
        import deltalake
    except ImportError:
        raise InputError("Delta tables need deltalake: pip install 'chainframe[delta]'") from None
    return deltalake


def is_table(folder: Location) -> bool:
    """Whether ``folder`` is a Delta table (it holds a transaction log)."""
    folder = location(folder)
    if isinstance(folder, Path):
        return (folder / LOG).is_dir()
    return storage(folder).exists(folder / LOG)


def uri(folder: Location) -> str:
    folder = location(folder)
    return str(Path(folder).absolute()) if isinstance(folder, Path) else str(folder)


def storage_options(folder: Location) -> dict[str, str] | None:
    """delta-rs' options for ``folder``: None locally; for S3 the credentials of botocore's usual chain (environment,
    ``AWS_PROFILE``, the shared files: the same as s3fs and the AWS CLI use), ``AWS_ENDPOINT_URL`` for S3-compatible
    servers, and conditional PUTs, which make concurrent commits safe without a lock service. Never printed."""
    if not isinstance(location(folder), ObjectPath):
        return None
    region = _aws_session().get_config_variable("region") or "us-east-1"
    options = {"conditional_put": "etag", "AWS_REGION": region, **_credentials()}
    endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
    if endpoint:
        options["AWS_ENDPOINT_URL"] = endpoint
        if endpoint.startswith("http://"):
            options["AWS_ALLOW_HTTP"] = "true"
    return options


def _aws_session() -> Any:
    """botocore's session for the ``AWS_*`` variables set now (see :func:`_session_for`)."""
    return _session_for(tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith("AWS_"))))


@functools.lru_cache(maxsize=4)
def _session_for(environment: tuple[tuple[str, str], ...]) -> Any:
    """botocore's session for these ``AWS_*`` variables, made once: making one costs 15-35 ms of CPU (its event
    handlers), and a run opens its tables a few times a round. Credentials that expire (a role's, SSO's) are refreshed
    by the session's own provider when asked for after their expiry; changed variables give a new session."""
    import botocore.session  # type: ignore[import-untyped]  # only for tables in a bucket: botocore is 0.1 s

    del environment  # the cache's key: the session reads the variables itself
    return botocore.session.get_session()


def _credentials() -> dict[str, str]:
    """The AWS credentials of botocore's usual chain, as delta-rs' options (none found: empty)."""
    found = _aws_session().get_credentials()
    if found is None:
        return {}
    frozen = found.get_frozen_credentials()
    credentials = {"AWS_ACCESS_KEY_ID": frozen.access_key, "AWS_SECRET_ACCESS_KEY": frozen.secret_key}
    if frozen.token:
        credentials["AWS_SESSION_TOKEN"] = frozen.token
    return credentials


def open_table(folder: Location, *, version: int | None = None, as_of: datetime | str | None = None) -> Any:
    """The ``DeltaTable`` at ``folder``: its latest version, or ``version``, or the one current at ``as_of``."""
    deltalake = _deltalake()
    try:
        table = deltalake.DeltaTable(uri(folder), version=version, storage_options=storage_options(folder))
        if as_of is not None:
            table.load_as_version(as_of)
    except deltalake.exceptions.TableNotFoundError:
        raise InputError(f"{folder} is not a Delta table") from None
    except Exception as exc:  # delta-rs' errors: a version that does not exist, an unreachable bucket
        raise StoreError(f"cannot read the Delta table {folder}: {_reason(exc)}") from None
    return table


def table_files(folder: Location, table: Any = None) -> list[Entry]:
    """The data files of the table's snapshot (latest unless ``table`` is a snapshot), sorted by name."""
    folder = location(folder)
    table = table if table is not None else open_table(folder)
    actions = table.get_add_actions(flatten=True)
    paths, sizes = actions.column("path").to_pylist(), actions.column("size_bytes").to_pylist()
    return sorted(
        (Entry(folder / str(p), int(s)) for p, s in zip(paths, sizes, strict=True)), key=lambda e: str(e.path)
    )


def snapshot_uris(folder: Location, *, version: int | None = None, as_of: datetime | str | None = None) -> list[str]:
    """The files a reader of the table reads at its latest version (or ``version``, or ``as_of``): immutable, so a
    query over them reads that one snapshot however many commits land meanwhile."""
    if version is None and as_of is None:
        return [str(e.path) for e in latest(folder).files]
    return [str(e.path) for e in table_files(folder, open_table(folder, version=version, as_of=as_of))]


class Snapshot:
    """A table's latest version as a reader found it: its number, data files and declared schema."""

    def __init__(self, version: int, files: list[Entry], schema: pa.Schema) -> None:
        self.version, self.files, self.schema = version, files, schema


class _Held:
    """A table :class:`_Latest` keeps open: the first commit's stamp it was opened under, and a lock for its use."""

    def __init__(self, table: Any, stamp: tuple[object, ...]) -> None:
        self.table, self.stamp, self.lock = table, stamp, threading.Lock()
        self.taken = False
        """Handed to a writer (:meth:`_Latest.take`): no reader may use it any more."""


class _Latest:
    """The tables this process read at their latest version, each kept open and brought up to date with
    ``update_incremental`` (one listing of the log past the version held, and a GET per commit since) instead of
    opened again (the last checkpoint and every commit since it, on S3 one request each). A run reads each table's
    latest snapshot several times (the layout, each round's plan, the report); opening it every time made the log's
    requests most of a Delta run's on S3 (issue 38). The run's writer takes its table from here too
    (:meth:`take`), where it opened it again: 42-48 of the 104-114 requests of an extension run of two tables.

    Every read still reads the store, so it sees any writer's commits exactly as a fresh open would. A table deleted
    and made again under the same name (its first commit replaced) is opened afresh: the first commit's stamp (S3's
    ETag, a local file's inode and time) is checked at each read, one HEAD."""

    LIMIT = 64

    def __init__(self) -> None:
        self._tables: OrderedDict[tuple[str, str], _Held] = OrderedDict()
        self._guard = threading.Lock()

    def _key(self, folder: Location) -> tuple[str, str]:
        return (uri(folder), json.dumps(storage_options(folder), sort_keys=True))

    def read(self, folder: Location) -> Snapshot | None:
        """The table's latest snapshot; None if ``folder`` holds no table."""
        folder = location(folder)
        key = self._key(folder)
        with self._guard:
            held = self._tables.get(key)
            if held is not None:
                self._tables.move_to_end(key)
        stamp = _first_commit(folder)
        if held is not None and held.stamp == stamp and stamp:
            with held.lock:
                if not held.taken:
                    try:
                        held.table.update_incremental()
                    except Exception as exc:
                        raise StoreError(f"cannot read the Delta table {folder}: {_reason(exc)}") from None
                    return _snapshot(folder, held.table)
        if not stamp and not is_table(folder):  # a first commit found is a table found: no listing of its log
            return None
        fresh = _Held(open_table(folder), stamp)
        with self._guard:
            self._tables[key] = fresh
            while len(self._tables) > self.LIMIT:
                self._tables.popitem(last=False)
        with fresh.lock:
            return _snapshot(folder, fresh.table)

    def take(self, folder: Location) -> Any | None:
        """The table kept open for ``folder``, brought up to date and no longer kept (a writer commits from it, so no
        reader may share it); None when none is kept, or the table was made again since, or it cannot be read."""
        folder = location(folder)
        with self._guard:
            held = self._tables.pop(self._key(folder), None)
        if held is None:
            return None
        with held.lock:
            held.taken = True
            if not held.stamp or _first_commit(folder) != held.stamp:
                return None
            try:
                held.table.update_incremental()
            except Exception:
                return None  # opened afresh by the writer, which says what is wrong
            return held.table


def _snapshot(folder: Location, table: Any) -> Snapshot:
    return Snapshot(int(table.version()), table_files(folder, table), pa.schema(table.schema().to_arrow()))


def _first_commit(folder: Location) -> tuple[object, ...]:
    """What tells the table's first commit from one a table made again in its place wrote (empty: none found)."""
    first = location(folder) / LOG / f"{0:020d}.json"
    if isinstance(first, Path):
        try:
            found = first.stat()
        except FileNotFoundError:
            return ()
        return (found.st_ino, found.st_mtime_ns, found.st_size)
    try:
        head = s3_storage().s3("read", first, "head_object", Bucket=first.bucket, Key=first.key)
    except StoreError:
        return ()  # gone (the log's old entries cleaned up): opened afresh
    return (head.get("ETag"), str(head.get("LastModified")))


_LATEST = _Latest()


def latest(folder: Location) -> Snapshot:
    """The table's latest snapshot (see :class:`_Latest`)."""
    found = _LATEST.read(folder)
    if found is None:
        raise InputError(f"{folder} is not a Delta table")
    return found


def latest_if_table(folder: Location) -> Snapshot | None:
    """The latest snapshot of the table at ``folder``, or None if there is none (see :class:`_Latest`)."""
    return _LATEST.read(folder)


def data_file(folder: Location, *, dataset: str, chain_id: int, slot: BlockSpan) -> Location:
    """A new, unique name for a slot's file in the table at ``folder``."""
    if not DATASET_NAME.match(dataset):
        raise ValueError(f"dataset name {dataset!r} must be lowercase words joined by single underscores")
    return location(folder) / DATA / f"{_stem(dataset, chain_id, slot)}__{secrets.token_hex(8)}.parquet"


def _stem(dataset: str, chain_id: int, slot: BlockSpan) -> str:
    return f"{dataset}__{chain_id}__{slot[0]:010d}_to_{slot[1]:010d}"


FILE_NAME = re.compile(r"^([a-z0-9_]+)__(\d+)__(\d{10})_to_(\d{10})__[0-9a-f]+\.parquet$")
"""A Delta series' data file: dataset, chain id, slot, a token that makes the name unique."""


# --- types -----------------------------------------------------------------------------------------------------------


def delta_schema(schema: pa.Schema) -> pa.Schema:
    """``schema`` in the types a Delta table can declare (see the module docstring)."""
    return pa.schema([pa.field(f.name, _delta_type(f.type), f.nullable) for f in schema])


def _delta_type(dtype: pa.DataType) -> pa.DataType:
    if pa.types.is_unsigned_integer(dtype):
        return {8: pa.int16(), 16: pa.int32()}.get(dtype.bit_width, pa.int64())
    if pa.types.is_fixed_size_binary(dtype) or pa.types.is_large_binary(dtype):
        return pa.binary()
    if pa.types.is_timestamp(dtype):
        return pa.timestamp("us", tz="UTC")
    if pa.types.is_list(dtype) or pa.types.is_large_list(dtype) or pa.types.is_fixed_size_list(dtype):
        return pa.list_(pa.field("element", _delta_type(dtype.value_type), dtype.value_field.nullable))
    if pa.types.is_struct(dtype):
        return pa.struct([pa.field(f.name, _delta_type(f.type), f.nullable) for f in dtype])
    return dtype


# --- the coordinator's commits ---------------------------------------------------------------------------------------


class DeltaWriter:
    """The one writer of a Delta series table in a run: claims it, then commits chunk files and deletions, each
    commit fenced by the run's epoch (see the module docstring). Only a run's coordinator makes one."""

    def __init__(self, folder: Location, schema: pa.Schema | None, *, name: str) -> None:
        """Claim the table at ``folder``, or create it with ``schema`` (chainframe's types: mapped here)."""
        self.folder = location(folder)
        self._slots: dict[str, list[Entry]] = {}
        """Each slot's files in the table (by the name they share before their token)."""
        self._deltalake = _deltalake()
        self._options = storage_options(self.folder)
        kept = _LATEST.take(self.folder)  # the table this process read last, if any: its log read already
        if kept is not None or is_table(self.folder):
            self.table = kept if kept is not None else open_table(self.folder)
            self.schema: Any = self.table.schema()
            self.epoch = int(self.table.transaction_version(APP_ID) or 0) + 1
            self._commit([], what="claim the table", info={"chainframe.operation": "claim"})
            self._index()
        else:
            if schema is None:
                raise ValueError(f"{folder} is not a Delta table yet: a schema is needed to create it")
            self.schema = delta_schema(schema)
            self.epoch = 1
            self.table = self._call(
                "create",
                lambda: self._deltalake.DeltaTable.create(
                    uri(self.folder), self.schema, name=name, storage_options=self._options,
                    configuration={"delta.checkpointInterval": str(CHECKPOINT_INTERVAL)},
                    commit_properties=self._properties({"chainframe.operation": "create"}),
                ),
            )  # fmt: skip
            self._refresh()

    def publish(self, files: Sequence[Written]) -> None:
        """Make each of ``files`` the file of its slot, in one commit that removes those slots' old files."""
        removes, adds, names = [], [], []
        for written in files:
            name = location(written.path).name
            if FILE_NAME.match(name) is None:
                raise ValueError(f"{written.path} is not a data file of a Delta series")
            stem = name.rsplit("__", 1)[0]
            removes += [self._remove(e) for e in self._slots.get(stem, [])]
            stats: dict[str, Any] = {"numRecords": written.meta.rows}
            if written.blocks is not None:
                stats |= {
                    "minValues": {"block_number": written.blocks[0]},
                    "maxValues": {"block_number": written.blocks[1]},
                }
            adds.append(self._deltalake.transaction.AddAction(
                f"{DATA}/{name}", written.size, {}, int(time.time() * 1000), True, json.dumps(stats)
            ))  # fmt: skip
            names.append((stem, Entry(self.folder / DATA / name, written.size)))
        first, last = files[0].meta, files[-1].meta
        info = {
            "chainframe.blocks": f"{first.start}..{last.end}",
            "chainframe.rows": str(sum(w.meta.rows for w in files)),
        }
        self._commit([*removes, *adds], what=f"commit blocks {first.start}..{last.end}", info=info)
        for stem, entry in names:
            self._slots[stem] = [entry]

    def delete(self, paths: Sequence[Location]) -> None:
        """Remove these files from the table (slots wholly above a head that moved back), in one commit."""
        wanted = {str(p) for p in paths}
        gone = [e for entries in self._slots.values() for e in entries if str(e.path) in wanted]
        if gone:
            self._commit([self._remove(e) for e in gone], what="remove slots", info={"chainframe.operation": "remove"})
            for stem, entries in list(self._slots.items()):
                self._slots[stem] = [e for e in entries if str(e.path) not in wanted]
        else:
            self._refresh()  # nothing of this snapshot to remove: a superseded writer still learns it is one

    def _index(self) -> None:
        """Each slot's files in the table now, read from the log once: after that this writer's own commits are the
        only ones (any other would supersede it), so it keeps the index itself, with no listing per commit."""
        self._slots = {}
        for entry in table_files(self.folder, self.table):
            self._slots.setdefault(entry.path.name.rsplit("__", 1)[0], []).append(entry)

    def _remove(self, entry: Entry) -> Any:
        relative = str(entry.path)[len(str(self.folder)) + 1 :]
        return self._deltalake.transaction.RemoveAction(relative, True, int(time.time() * 1000), entry.size)

    def _properties(self, info: Mapping[str, str]) -> Any:
        transaction = self._deltalake.transaction
        return transaction.CommitProperties(
            custom_metadata=dict(info), app_transactions=[transaction.Transaction(APP_ID, self.epoch)],
            max_commit_retries=3,
        )  # fmt: skip

    def _commit(self, actions: list[Any], *, what: str, info: Mapping[str, str] | None = None) -> None:
        """Commit from the snapshot this writer last committed or checked: a commit of another run since (with the
        same application id) makes delta-rs refuse it; then the refreshed snapshot must still be this run's."""
        properties = self._properties({"chainframe.operation": "write", **(info or {})})
        # A lease that lapsed (this process was paused, or cut off from S3) may have been taken over by a run that
        # has not committed yet: refused here as surely as after its first commit.
        storage(self.folder).check_held(self.folder)
        try:
            self.table.create_write_transaction(actions, "append", self.schema, commit_properties=properties)
        except self._deltalake.exceptions.CommitFailedError:
            raise self._superseded(what) from None
        except Exception as exc:
            raise StoreError(f"cannot {what} in the Delta table {self.folder}: {_reason(exc)}") from None
        self._refresh()

    def _refresh(self) -> None:
        self._call("read", self.table.update_incremental)
        if int(self.table.transaction_version(APP_ID) or 0) != self.epoch:
            raise self._superseded("go on writing")

    def _superseded(self, what: str) -> Superseded:
        return Superseded(
            f"cannot {what} in {self.folder}: another run has written to this table since this run took it over "
            f"(this run's epoch {self.epoch}; this run was stopped, paused or cut off meanwhile). Nothing more of "
            "this run is committed; what it committed before is whole. Re-run to continue from what is there."
        )

    def _call(self, what: str, action: Any) -> Any:
        try:
            return action()
        except Exception as exc:
            raise StoreError(f"cannot {what} the Delta table {self.folder}: {_reason(exc)}") from None


def vacuum(folder: Location, *, retention_hours: float) -> list[str]:
    """Delete the files the table no longer references and that left it at least ``retention_hours`` ago (a reader
    holding an older snapshot needs them), and the log entries past their retention; return the deleted files.

    A fenced writer like any run: it claims the table's epoch first, so a run that wrote files it has not committed
    yet (paused, cut off) can never commit them once they may be deleted: its commit is refused (:class:`Superseded`)
    and no version of the table names a deleted file."""
    claim = DeltaWriter(folder, None, name=location(folder).name)
    table = claim.table
    storage(claim.folder).check_held(claim.folder)
    try:
        # full: also the files no commit ever named (written by a run that was killed or superseded before its
        # commit), which delta-rs' default vacuum (removed files only) leaves; both by age, past the retention.
        deleted: list[str] = table.vacuum(
            retention_hours=math.ceil(retention_hours), dry_run=False, enforce_retention_duration=False, full=True
        )
        table.cleanup_metadata()
    except Exception as exc:
        raise StoreError(f"cannot vacuum the Delta table {folder}: {_reason(exc)}") from None
    return deleted


def declared_schema(folder: Location) -> pa.Schema:
    """The Arrow schema the table's log declares (Delta's types: see the module docstring)."""
    return latest(folder).schema


def version(folder: Location) -> int:
    return latest(folder).version


def _reason(exc: BaseException) -> str:
    """delta-rs' message without the Rust backtrace it appends when ``RUST_BACKTRACE`` is set, and without any of the
    credentials it was given (an S3 error body can echo the access key id)."""
    text = str(exc).split("\n   0:", 1)[0].strip()

    return f"{type(exc).__name__}: {redact_text(text, *_credentials().values())[:500]}"
