"""``function=``: a dataset whose rows are calls (transactions, trace frames) kept as the calls of some functions only,
each with its arguments decoded into typed columns.

It is what ``event=`` is to logs: the functions are the series' filter (their full text, names kept, in every chunk's
footer), so a series folder ``transactions__f<digest>/`` holds only those calls and never mixes with the plain one.
The raw rows are fetched, checked and proven as the dataset's own (the transactions root proves a transaction's
input); :meth:`DecodesCalls.kept_rows` then keeps the rows whose input starts with a listed selector and adds
``selector``, ``function``, ``decode_error`` and one column per argument (:func:`chainframe.decode.call_columns`).
A call that does not decode with its function is kept with its input and the reason; the engine counts them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from itertools import pairwise
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import pyarrow as pa

from chainframe._errors import InputError
from chainframe.datasets._columns import U256
from chainframe.datasets._inputs import Input

if TYPE_CHECKING:
    from chainframe import decode
else:
    from chainframe._lazy import decode


CALL_CHUNKS = 10
"""A series of some functions' calls is in chunks of this many times its dataset's blocks (traces 1,000, transactions
10,000): each series' chunk file, commit and pieces cost alike whatever rows they hold, and an ABI's series per
function each keep a few of the calls (the benchmark Token's nine functions: 5,319 of 18,120 transactions; at the
dataset's size, traces decoded into a series per function cost 2.6x the raw CPU, at ten times 1.3x)."""


def _as_given(value: Any) -> Any:
    return value  # checked by the dataset, which knows the columns an argument's name must not take


FUNCTION = Input("function", "--function", "keep only the calls of these functions, their arguments decoded into "
                 "typed columns", _as_given, parse="own", metavar="SIGNATURE")  # fmt: skip


def functions_of(given: Any) -> list[Any]:
    """``function=`` as given (a signature, a list of signatures and ABI entries, an ABI's JSON text) as
    :class:`~chainframe.decode.Function` s; a signature that does not parse, an ABI entry without a name, two
    functions of one selector refused with :class:`~chainframe.InputError`."""
    values = list(given) if isinstance(given, list | tuple) else [given]
    found: list[decode.Function] = []
    for value in values:
        try:
            if isinstance(value, decode.Function):
                found.append(value)
            elif isinstance(value, dict):
                found += decode.functions_from_abi([value])
            elif isinstance(value, str) and value.lstrip().startswith("["):
                found += decode.functions_from_abi(value)
            elif isinstance(value, str):
                found.append(decode.parse_function(value))
            else:
                raise TypeError(type(value).__name__)
        except (TypeError, KeyError, AttributeError, ValueError) as exc:
            if isinstance(exc, InputError):
                raise
            raise InputError(f"function must be a signature, a list of them or an ABI; got {value!r} ({exc})") from None
    if not found:
        raise InputError("function= names no function (an ABI without function entries?)")
    return decode.as_functions(found)


@lru_cache(maxsize=64)
def _parsed(texts: tuple[str, ...]) -> tuple[Any, ...]:
    """A series' functions (their checked text) parsed once, not once per piece: a run asks for them per piece."""
    return tuple(decode.as_functions(list(texts)))


_SCHEMAS: dict[tuple[int, tuple[str, ...], str, bool], tuple[pa.Schema, pa.Schema]] = {}
""":func:`_with_calls`' schemas, by the base schema's identity (hashing a schema of 50 fields takes 0.1 ms, longer
than the lookup saves), which each entry holds alive."""


def _with_calls(base: pa.Schema, texts: tuple[str, ...], u256: U256, outputs: bool) -> pa.Schema:
    """``base`` with the call columns of the functions ``texts``: made once per series, not once per piece (the base
    schemas are a dataset's, made once: :func:`~chainframe.datasets._columns.schema`)."""
    key = (id(base), texts, u256, outputs)
    known = _SCHEMAS.get(key)
    if known is not None and known[0] is base:
        return known[1]
    if len(_SCHEMAS) > 1024:
        _SCHEMAS.clear()
    made = _schema_with_calls(base, texts, u256, outputs)
    _SCHEMAS[key] = (base, made)
    return made


def _schema_with_calls(base: pa.Schema, texts: tuple[str, ...], u256: U256, outputs: bool) -> pa.Schema:
    made = [f for f in decode.CALL if f.name not in base.names]
    functions = _parsed(texts)
    fields = decode.call_fields(functions, taken=base.names, u256=u256)
    if outputs:
        fields += decode.output_fields(functions, u256=u256)
    return pa.schema([*base, *made, *fields], metadata=base.metadata)


class DecodesCalls:
    """Mixed into a dataset whose rows are calls (an ``input`` column): it takes ``function=`` (declare
    :data:`FUNCTION` in its ``inputs``)."""

    columns: tuple[str, ...]
    keeps_by: ClassVar[tuple[str, ...]] = ("function",)
    decodes_outputs: ClassVar[Literal["never", "always", "one function"]] = "never"
    """Whether its ``output`` column (what the call returned) is decoded with the functions' outputs (``returns
    (...)``, an ABI entry's ``outputs``) into ``output_<name>`` columns, which the series' filter then keeps in each
    function's text: ``always`` (``eth_calls``: the outputs of several functions share a column by name, a name of
    two types refused, in a series of several an earlier chainframe wrote), ``one function`` (``traces``: in a series
    of one function, as the engine writes each function's, where no two functions' outputs meet; a series of several
    an earlier chainframe wrote keeps them raw), or ``never``."""

    def outputs_decoded(self, functions: Sequence[Any]) -> bool:
        """Whether a series of ``functions`` decodes their outputs (:attr:`decodes_outputs`)."""
        return self.decodes_outputs == "always" or (self.decodes_outputs == "one function" and len(functions) == 1)

    def check_inputs(self, given: Mapping[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = super().check_inputs(given)  # type: ignore[misc]
        if out.get("function"):
            functions = functions_of(out["function"])  # two functions of one selector refused here
            for one in functions:  # the engine writes a series per function (keeps_by): each one's columns checked
                decode.call_fields([one], taken=self.columns, u256="decimal")
                if self.outputs_decoded([one]):
                    decode.output_fields([one], u256="decimal")
            outputs = self.outputs_decoded(functions)
            out["function"] = [f.full_text if outputs else f.text for f in functions]
        return out

    def schema_with(self, filters: Mapping[str, Any], u256: U256 = "decimal") -> pa.Schema:
        base: pa.Schema = super().schema_with(filters, u256)  # type: ignore[misc]
        if not filters.get("function"):
            return base

        texts = tuple(filters["function"])
        return _with_calls(base, texts, u256, self.outputs_decoded(texts))

    def chunk_size_for(self, filters: Mapping[str, Any]) -> int:
        """With ``function``: :data:`CALL_CHUNKS` times the dataset's, as the calls of a few functions are a small
        part of the rows read."""
        size: int = super().chunk_size_for(filters)  # type: ignore[misc]
        return size * CALL_CHUNKS if filters.get("function") else size

    def selects(self, filters: Mapping[str, Any]) -> bool:
        return bool(filters.get("function"))

    def kept_rows(self, table: pa.Table, filters: Mapping[str, Any], *, u256: U256 = "decimal") -> pa.Table:
        """With ``function``: the rows that are calls of its functions, in order, with their decoded columns."""
        if not filters.get("function"):
            return table
        from chainframe import _kernels as pc  # deferred: the Arrow kernels load when calls are filtered

        functions = _parsed(tuple(filters["function"]))
        rows, calls = decode.call_columns(table, functions, taken=table.column_names, u256=u256,
                                          outputs=self.outputs_decoded(functions))  # fmt: skip
        kept = pc.take(table, rows)
        schema = self.schema_with(filters, u256)
        columns = {**{n: kept[n] for n in kept.column_names}, **{n: calls[n] for n in calls.column_names}}
        return pa.Table.from_arrays([columns[f.name] for f in schema], schema=schema)

    def kept_rows_each(
        self, table: pa.Table, filters: Sequence[Mapping[str, Any]], *, u256: U256 = "decimal"
    ) -> list[pa.Table]:
        """Each one's calls, decoded in one pass over all their functions (a parameter or output name is the same
        column in every series that has it, so the calls of each are the pass's rows of its selectors, with its
        columns; a series of one function whose outputs are decoded, :attr:`decodes_outputs` ``one function``, has
        them decoded on its own rows); one by one where two of them give a name two types, or one keeps every
        row."""
        texts = list(dict.fromkeys(text for each in filters for text in each.get("function") or ()))
        if len(filters) < 2 or not all(each.get("function") for each in filters):
            return super().kept_rows_each(table, filters, u256=u256)  # type: ignore[misc,no-any-return]
        from chainframe import _kernels as pc  # deferred: the Arrow kernels load when calls are filtered

        own_outputs = self.decodes_outputs == "one function"  # each one's outputs, decoded on its own rows
        try:
            rows, calls = decode.call_columns(table, _parsed(tuple(texts)), taken=table.column_names, u256=u256,
                                              outputs=self.decodes_outputs == "always")  # fmt: skip
        except InputError:  # a name of two types: each decodes its own
            return super().kept_rows_each(table, filters, u256=u256)  # type: ignore[misc,no-any-return]
        functions = [_parsed(tuple(each["function"])) for each in filters]
        schemas = [self.schema_with(each, u256) for each in filters]
        grouped = decode.selector_groups(calls, functions)
        if grouped is None:  # a function in two of them: each takes its rows
            kept = pc.take(table, rows)
            columns = {**{n: kept[n] for n in kept.column_names}, **{n: calls[n] for n in calls.column_names}}
            parts = [{n: pc.take(c, decode.selector_rows(calls, own)) for n, c in columns.items()} for own in functions]
            return [self._kept(part, own, schema, own_outputs, u256) for part, own, schema in zip(parts, functions,
                    schemas, strict=True)]  # fmt: skip
        # Each one's rows side by side: one take, and a table of every series' columns made (and checked) once;
        # each series' rows are then a slice of it, its columns chosen by name.
        order, starts = grouped
        kept, calls = pc.take(table, pc.take(rows, order)), calls.take(order)
        columns = {**{n: kept[n] for n in kept.column_names}, **{n: calls[n] for n in calls.column_names}}
        fields = {f.name: f for schema in schemas for f in schema if f.name in columns}
        every = pa.Table.from_arrays([columns[n] for n in fields], schema=pa.schema(fields.values()))
        out = []
        for schema, own, (a, b) in zip(schemas, functions, pairwise(starts), strict=True):
            part = every.slice(a, b - a)
            if not (own_outputs and self.outputs_decoded(own)):
                mine = part.select(schema.names).replace_schema_metadata(schema.metadata)
                if mine.schema.equals(schema, check_metadata=True):
                    out.append(mine)
                    continue
            columns = dict(zip(part.column_names, part.columns, strict=True))
            out.append(self._kept(columns, own, schema, own_outputs, u256))
        return out

    def _kept(
        self, part: Mapping[str, Any], own: Sequence[Any], schema: pa.Schema, own_outputs: bool, u256: U256
    ) -> pa.Table:
        """One series' rows from its columns (``part``), its outputs decoded where it decodes its own."""
        if own_outputs and self.outputs_decoded(own):
            part = decode.with_outputs(part, own[0], u256=u256)
        return pa.Table.from_arrays([part[f.name] for f in schema], schema=schema)
