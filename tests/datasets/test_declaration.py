"""A dataset is one declaration (issue 27): no engine, CLI, store or client module names a dataset, and a dataset
defined here, in a test, with one registry call, is extracted, planned, described, probed and refused like the
catalogue's own."""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import chainframe
from chainframe.cli import main
from chainframe.datasets import DATASETS, U256, BlockRange, Dataset, Input, register, unregister
from chainframe.datasets._dataset import build, read_fields
from chainframe.datasets._envelope import batch_rows
from chainframe.datasets._registry import REGISTRY
from chainframe.devnet import Devnet
from chainframe.engine._routes import Check, routes

SRC = Path(chainframe.__file__).parent
ROOMS = ("engine", "cli", "store", "rpc")
"""The rooms that must know no dataset by name. ``verify`` proves the chain's structures (headers, transactions,
receipts, logs, uncles, accounts, slots), whose names its checks carry; ``decode`` and ``devnet`` are about events
and a node, and name what they make."""
NOT_DATASET_NAMES = {
    ("engine/_api.py", "blocks"): "off_chain's record: the key of a block range",
    ("cli/_info.py", "blocks"): "the same record, read",
    ("engine/_routes.py", "transactions"): "a block answer's JSON field",
}
USERS = {"cli/_demo.py": "the demo is a user's job: it names the datasets it extracts, as any user does"}


def _strings(tree: ast.AST) -> Iterator[ast.Constant]:
    """String constants that are not docstrings."""
    docs: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docs.add(id(first.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            yield node


def test_no_engine_cli_store_or_client_module_names_a_dataset() -> None:
    named = []
    for room in ROOMS:
        for path in sorted((SRC / room).rglob("*.py")):
            where = str(path.relative_to(SRC))
            if where in USERS:
                continue
            for node in _strings(ast.parse(path.read_text(encoding="utf-8"))):
                if node.value in REGISTRY and (where, node.value) not in NOT_DATASET_NAMES:
                    named.append(f"{where}:{node.lineno} names {node.value!r}")
    assert not named, "declare it on the dataset class instead:\n" + "\n".join(named)


def test_the_allowances_are_still_needed() -> None:
    """An allowance that no longer matches anything is dropped, so the list cannot grow stale."""
    for where, value in NOT_DATASET_NAMES:
        tree = ast.parse((SRC / where).read_text(encoding="utf-8"))
        assert any(node.value == value for node in _strings(tree)), (where, value)


GAS_BLOCKS = Input("gas_floor", "--gas-floor", "only blocks that used at least this much gas", lambda v: int(v))


class BlockGas(Dataset):
    """A dataset of a test's own: the gas each block used, from eth_getBlockByNumber (without transactions)."""

    name = "block_gas"
    doc = "Gas used per block (a test's dataset)."
    columns = ("chain_id", "block_number", "block_hash", "gas_used", "gas_limit")
    sort = ("block_number",)
    fetched_with = "eth_getBlockByNumber, batched"
    method = "eth_getBlockByNumber"
    chunk_size = 7
    inputs = (GAS_BLOCKS,)
    null_checked = True
    unprovable = dict.fromkeys(columns, "a test's dataset: nothing proves it")
    sources: ClassVar[dict[str, str]] = {
        "block_number": "number",
        "block_hash": "hash",
        "gas_used": "gasUsed",
        "gas_limit": "gasLimit",
    }

    async def fetch(self, client: Any, blocks: BlockRange, **filters: Any) -> list[bytes]:
        calls = [("eth_getBlockByNumber", [hex(n), False]) for n in blocks]
        return [bytes(b) for b in await client.batch_bytes(calls)]

    def transform(self, bodies: Sequence[bytes], *, chain_id: int, u256: U256 = "decimal") -> pa.Table:
        import polars as pl

        frames = [batch_rows(b, read_fields(self.sources)) for b in bodies]
        frame = pl.concat(frames) if frames else pl.DataFrame(schema=read_fields(self.sources))
        return build(frame, self.sources, self.columns, chain_id=chain_id, u256=u256)


BLOCK_GAS = BlockGas()


@pytest.fixture
def block_gas() -> Iterator[Dataset]:
    register(BLOCK_GAS)
    try:
        yield BLOCK_GAS
    finally:
        unregister(BLOCK_GAS.name)


def test_a_registered_dataset_is_extracted_like_the_catalogues(
    block_gas: Dataset, devnet: Devnet, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rpc = ["--rpc", devnet.http_url, "--out", str(tmp_path)]
    assert main(["extract", "block_gas", "blocks", "--blocks", "0:20", *rpc, "--no-progress"]) == 0
    capsys.readouterr()
    files = sorted((tmp_path / "block_gas").glob("*.parquet"))
    assert len(files) == 3  # its own chunk size, 7 blocks: 0..6, 7..13, 14..20
    mine = pa.concat_tables([pq.read_table(f) for f in files]).to_pylist()
    blocks = pq.read_table(tmp_path / "blocks").select(["block_number", "block_hash", "gas_used", "gas_limit"])
    assert [{k: r[k] for k in ("block_number", "block_hash", "gas_used", "gas_limit")} for r in mine] == sorted(
        blocks.to_pylist(), key=lambda r: r["block_number"]
    )
    # --dry prices it by its declaration: one eth_getBlockByNumber per block.
    assert main(["extract", "block_gas", "--blocks", "0:27", *rpc, "--dry"]) == 0
    plan = capsys.readouterr().out
    assert "block_gas" in plan
    assert "chunks: 1 new; 3 stored; 7 blocks to fetch: 7 eth_getBlockByNumber calls" in plan
    # schema describes it; --verify says nothing proves it.
    assert main(["schema", "block_gas"]) == 0
    described = capsys.readouterr().out
    assert "gas_floor (--gas-floor)" in described
    assert "7 blocks by default" in described
    assert "a test's dataset: nothing proves it" in described
    report = chainframe.extract("block_gas", blocks="21:22", out=tmp_path / "v", rpc=devnet.http_url, verify=True,
                                progress=False)  # fmt: skip
    assert report.datasets["block_gas"]["verified_blocks"] == 0
    assert report.datasets["block_gas"]["unverified"] == {"block_gas": "a test's dataset: nothing proves it"}


def test_a_registered_datasets_inputs_are_checked_before_any_request(block_gas: Dataset, tmp_path: Path) -> None:
    with pytest.raises(chainframe.InputError, match="'block_gas' takes only gas_floor; got addresses"):
        chainframe.extract("block_gas", blocks="0:1", out=tmp_path, rpc="http://127.0.0.1:9", addresses=["0x00"])
    assert "block_gas" in DATASETS
    with pytest.raises(ValueError, match="registered already"):
        register(type("Other", (BlockGas,), {})())


def test_the_probe_routes_a_registered_dataset_by_its_declaration(block_gas: Dataset) -> None:
    served = {"eth_getBlockByNumber": Check(name="eth_getBlockByNumber", status="served")}
    found = {r.dataset: r for r in routes(served, archive=None)}
    assert found["block_gas"].works
    assert found["block_gas"].route == "eth_getBlockByNumber"
    missing = {"eth_getBlockByNumber": Check(name="eth_getBlockByNumber", status="missing")}
    assert routes(missing, archive=None)[-1].note == "the node lacks eth_getBlockByNumber"


def test_the_catalogue_cannot_lose_a_dataset() -> None:
    with pytest.raises(ValueError, match="in the catalogue"):
        unregister("logs")
