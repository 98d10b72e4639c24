"""chainframe._kernels gives what pyarrow.compute's functions of the same names give, on arrays with nulls, chunked
arrays and tables: callers may read ``pc.greater`` as pyarrow's."""

from __future__ import annotations

import random

import pyarrow as pa
import pyarrow.compute as arrow
import pytest

from chainframe import _kernels as pc

rng = random.Random(7)
N = 200


def _ints() -> pa.Array:
    return pa.array([None if rng.random() < 0.1 else rng.randrange(0, 1000) for _ in range(N)], pa.uint64())


def _bools() -> pa.Array:
    return pa.array([None if rng.random() < 0.1 else rng.random() < 0.5 for _ in range(N)])


@pytest.mark.parametrize("name", ["add", "subtract", "equal", "not_equal", "greater", "greater_equal", "less_equal"])
def test_binary_kernels(name: str) -> None:
    a, b = _ints(), _ints()
    if name == "subtract":
        a = pc.add(a, b)  # no unsigned underflow
    assert getattr(pc, name)(a, b).equals(getattr(arrow, name)(a, b))
    chunked = pa.chunked_array([a[:50], a[50:]])
    assert getattr(pc, name)(chunked, b).equals(getattr(arrow, name)(chunked, b))


def test_logic_and_aggregates() -> None:
    x, y = _bools(), _bools()
    assert pc.and_(x, y).equals(arrow.and_(x, y))
    assert pc.or_(x, y).equals(arrow.or_(x, y))
    assert pc.is_null(x).equals(arrow.is_null(x))
    assert pc.if_else(x, _ints(), _ints()).type == pa.uint64()
    for name in ("all", "any"):
        for values in (x, pa.array([True, None]), pa.array([], pa.bool_()), pa.array([False, None])):
            assert getattr(pc, name)(values).as_py() == getattr(arrow, name)(values).as_py()
    numbers = _ints()
    assert pc.sum(numbers).as_py() == arrow.sum(numbers).as_py()
    assert pc.min_max(numbers).as_py() == arrow.min_max(numbers).as_py()
    assert pc.sum(pa.array([], pa.uint64())).as_py() is None


def test_selection() -> None:
    numbers, mask = _ints(), _bools()
    table = pa.table({"n": numbers, "m": mask})
    assert pc.filter(numbers, mask).equals(arrow.filter(numbers, mask))
    assert pc.filter(table, mask).equals(table.filter(mask))
    order = pc.sort_indices(numbers)
    assert order.equals(arrow.sort_indices(numbers))
    assert pc.take(table, order).equals(table.take(order))
    assert pc.take(numbers, pa.array([0, None, 3])).to_pylist() == [numbers[0].as_py(), None, numbers[3].as_py()]
    values = pa.array([1, 5, 9], pa.uint64())
    assert pc.is_in(numbers, value_set=values).equals(arrow.is_in(numbers, value_set=values))


def test_coalesce() -> None:
    a, b = _ints(), _ints()
    assert pc.coalesce(a, b).equals(arrow.coalesce(a, b))


def test_lists() -> None:
    lists = pa.array([[1, 2], None, [], [3], None, [4, 5, 6]], pa.list_(pa.int64()))
    sliced = lists[1:]
    for arr in (lists, sliced):
        assert pc.list_flatten(arr).equals(arr.flatten())
        assert pc.list_parent_indices(arr).equals(arrow.list_parent_indices(arr))
        assert pc.list_value_length(arr).equals(arrow.list_value_length(arr))


def test_cast_is_safe_and_skips_a_cast_to_the_same_type() -> None:
    numbers = _ints()
    assert pc.cast(numbers, pa.int64()).equals(numbers.cast(pa.int64()))
    assert pc.cast(numbers, pa.uint64()) is numbers
    with pytest.raises(pa.ArrowInvalid):
        pc.cast(pa.array([300], pa.uint64()), pa.uint8())
    with pytest.raises(pa.ArrowInvalid):
        pc.cast(pa.array([b"abc"]), pa.binary(32))
    assert pc.cast(pa.array([b"ab"]), pa.binary(2)).type == pa.binary(2)


def test_cast_table_keeps_names_and_refuses_others() -> None:
    table = pa.table({"a": pa.array([1, 2], pa.int64()), "b": pa.array([b"x", None])})
    schema = pa.schema([pa.field("a", pa.uint32()), pa.field("b", pa.large_binary())], metadata={b"k": b"v"})
    cast = pc.cast_table(table, schema)
    assert cast.equals(table.cast(schema))
    assert cast.schema.metadata == {b"k": b"v"}
    with pytest.raises(ValueError, match="not the schema"):
        pc.cast_table(table, pa.schema([pa.field("a", pa.uint32()), pa.field("c", pa.binary())]))
    with pytest.raises(pa.ArrowInvalid):
        pc.cast_table(pa.table({"a": [-1], "b": [b"x"]}), schema)


@pytest.mark.parametrize(
    ("value", "dtype"),
    [(7, pa.uint64()), (-3, pa.int32()), (True, pa.bool_()), (False, pa.bool_()), (b"\x01" * 32, pa.binary(32)),
     (b"ab", pa.binary()), ("x", pa.string())],
)  # fmt: skip
def test_constant_is_the_value_repeated_without_a_scalar(value: object, dtype: pa.DataType) -> None:
    """The buffers built for integers, booleans and fixed-size bytes hold what pa.repeat of a scalar would (which
    makes pyarrow import pandas where it is installed); other types take pa.repeat."""
    for n in (0, 1, 9):
        assert pc.constant(value, n, dtype).equals(pa.repeat(pa.scalar(value, dtype), n))


@pytest.mark.parametrize(
    "values",
    [
        _ints(),
        _ints().slice(3, 150),  # an offset that is not a multiple of 8
        pa.array(range(20)),  # no nulls: no bitmap
        pa.array([1, None, 3])[1:1],  # empty
        pa.nulls(5),  # null-typed: no bitmap, every row null
        pa.array([b"ab", None, b""] * 11, pa.binary()),
    ],
)
def test_valid_rows_is_arrows_is_valid_as_numpy(values: pa.Array) -> None:
    rows = pc.valid_rows(values)
    assert rows.dtype == bool
    assert rows.tolist() == arrow.is_valid(values).to_pylist() == [v is not None for v in values.to_pylist()]
