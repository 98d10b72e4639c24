"""A proof is declared on its dataset (issue 38): what it reads, what it proves and its check are data the engine and
``chainframe verify`` run as declared. A kind of proof defined here, in a test, on a test's dataset, is run by
``extract --verify`` and by ``verify --rpc`` with no engine or verify module changed, and a folder proof declared so
(:class:`~chainframe.datasets.Offline`) by the offline ``verify DIR``; the catalogue's proofs read what they read
before, and no engine or verify module asks which kind of proof it runs."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import ClassVar

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import chainframe
from chainframe.cli import main
from chainframe.datasets import BLOCKS, DATASETS, Dataset, Offline, Proof, register, unregister
from chainframe.devnet import Devnet
from chainframe.engine import verify_reads, verify_stored
from chainframe.verify import Piece, Report, check_same_rows, together_reads, verify_folder, verify_tables
from tests.datasets.test_declaration import BlockGas

SRC = Path(chainframe.__file__).parent
GAS = ["block_number", "block_hash", "gas_used", "gas_limit"]


@contextmanager
def registered(dataset: Dataset) -> Iterator[Dataset]:
    """``dataset`` in the catalogue while inside, as a plugin's would be."""
    register(dataset)
    try:
        yield dataset
    finally:
        unregister(dataset.name)


def prove_gas(piece: Piece) -> None:
    """A test's check: the headers proven by their hashes, and each row's gas what its proven header says."""
    headers = piece.headers
    verify_tables(blocks=headers, report=piece.report, chain_id=piece.chain_id, headers=not piece.headers_proven)
    check_same_rows(piece.name, "gas", piece.rows.select(GAS), headers.select(GAS), ["block_number"], piece.report)


class GasProof(Proof):
    """A kind of proof of a test's own: named nowhere but here."""

    doc = "the header's gas used and gas limit, the header proven by its hash"
    reads = ("blocks",)
    check = f"{__name__}:prove_gas"


class ProvenGas(BlockGas):
    """test_declaration's dataset of a test's own (the gas each block used), proven by the test's kind of proof."""

    name = "proven_gas"
    doc = "Gas used per block, proven against the header (a test's dataset)."
    block_params = (False,)  # its answers are the headers' own: the run shares them with its proof
    unprovable: ClassVar[dict[str, str]] = {}
    proof = GasProof()


PROVEN_GAS = ProvenGas()


@pytest.fixture
def proven_gas() -> Iterator[Dataset]:
    with registered(PROVEN_GAS) as dataset:
        yield dataset


def test_a_kind_of_proof_declared_in_a_test_runs_in_extract_verify_and_verify_rpc(
    proven_gas: Dataset, devnet: Devnet, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rpc = ["--rpc", devnet.http_url]
    # extract --verify: its pieces proven by the declared check, against the headers the declaration reads.
    assert main(["extract", "proven_gas", "--blocks", "0:20", "--out", str(tmp_path), *rpc, "--verify",
                 "--no-progress"]) == 0  # fmt: skip
    capsys.readouterr()
    report = chainframe.extract("proven_gas", blocks="21:27", out=tmp_path, rpc=devnet.http_url, verify=True,
                                progress=False)  # fmt: skip
    assert report.datasets["proven_gas"]["verified_blocks"] == 7
    assert report.datasets["proven_gas"]["verified_rows"] == 7
    assert report.datasets["proven_gas"]["unverified"] == {}
    # verify --rpc: the stored rows proven by the same check, the headers fetched as the declaration says.
    stored = verify_stored(tmp_path, rpc=devnet.http_url)
    assert stored.failures == []
    assert stored.blocks_verified["proven_gas"] == stored.rows_verified["proven_gas"] == 28
    assert main(["verify", str(tmp_path), *rpc]) == 0
    # A row changed on disk fails the test's check, naming the block and the column.
    path = sorted((tmp_path / "proven_gas").glob("*.parquet"))[1]
    file = pq.ParquetFile(path)
    table = file.read()
    gas = table["gas_used"].to_pylist()
    gas[2] += 1
    table = table.set_column(table.column_names.index("gas_used"), "gas_used", pa.array(gas, pa.uint64()))
    footer = {k: v for k, v in (file.metadata.metadata or {}).items() if k != b"ARROW:schema"}
    pq.write_table(table.replace_schema_metadata(footer), path)
    failures = verify_stored(tmp_path, rpc=devnet.http_url).failures
    assert [(f.dataset, f.block_number, f.check) for f in failures] == [("proven_gas", 9, "gas")]
    assert "gas_used" in failures[0].expected


def test_a_run_shares_what_a_declared_proof_reads() -> None:
    assert verify_reads(PROVEN_GAS) == {("eth_getBlockByNumber", (False,))}  # its own answers are the headers'
    assert PROVEN_GAS.proof is not None
    assert PROVEN_GAS.proof.read(PROVEN_GAS) == (BLOCKS,)


def check_stored_gas(
    *, report: Report, blocks: pa.Table | None = None, folder_gas: pa.Table | None = None, **_: object
) -> None:
    """A test's folder check: each stored row's gas is its stored header's (the headers proven by the folder first;
    ``verify DIR`` gives the rows of the blocks the headers cover, and ``headers``, ``chain_id``, ``family`` and
    ``proven``, which this check does not need)."""
    if folder_gas is None:
        return
    if blocks is None:
        report.skip("folder_gas", "gas", "no headers stored to check against", blocks=folder_gas.num_rows)
        return
    check_same_rows("folder_gas", "gas", folder_gas.select(GAS), blocks.select(GAS), ["block_number"], report)
    report.count("folder_gas", blocks=blocks.num_rows, rows=folder_gas.num_rows)


class FolderGasProof(GasProof):
    """The test's kind of proof, with how a folder proves the rows offline: declared here and nowhere else."""

    offline = Offline(check=f"{__name__}:check_stored_gas")


class FolderGas(ProvenGas):
    name = "folder_gas"
    doc = "Gas used per block, proven against the folder's stored header (a test's dataset)."
    proof = FolderGasProof()


FOLDER_GAS = FolderGas()


@pytest.fixture
def folder_gas() -> Iterator[Dataset]:
    with registered(FOLDER_GAS) as dataset:
        yield dataset


def test_a_folder_proof_declared_in_a_test_runs_in_offline_verify(
    folder_gas: Dataset, devnet: Devnet, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    chainframe.extract(["blocks", "folder_gas"], blocks="0:20", out=tmp_path, rpc=devnet.http_url, progress=False)
    # verify DIR (no node): the rows proven by the declared check against the stored headers, none left as skipped.
    report = verify_folder(tmp_path)
    assert report.failures == []
    assert report.blocks_verified["folder_gas"] == report.rows_verified["folder_gas"] == 21
    assert [s for s in report.skipped if s.dataset == "folder_gas"] == []
    assert main(["verify", str(tmp_path)]) == 3  # all passed; the blocks' transaction hashes: no transactions stored
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split() == ["folder_gas", "21", "blocks", "21", "rows", "checked"]
    assert "blocks (transaction_hashes)" in lines[-1]  # the only one skipped
    assert "folder_gas" not in together_reads()  # it declares no series read beside it: verify --rpc proves it online
    # A row changed on disk fails the declared check, naming the block and the column.
    path = sorted((tmp_path / "folder_gas").glob("*.parquet"))[1]
    file = pq.ParquetFile(path)
    table = file.read()
    gas = table["gas_used"].to_pylist()
    gas[2] += 1
    table = table.set_column(table.column_names.index("gas_used"), "gas_used", pa.array(gas, pa.uint64()))
    footer = {k: v for k, v in (file.metadata.metadata or {}).items() if k != b"ARROW:schema"}
    pq.write_table(table.replace_schema_metadata(footer), path)
    failures = verify_folder(tmp_path).failures
    assert [(f.dataset, f.block_number, f.check) for f in failures] == [("folder_gas", 9, "gas")]
    assert "gas_used" in failures[0].expected
    # Its headers' file gone: the rows cannot be proven offline, and are reported as skipped with the reason.
    for path in (tmp_path / "blocks").glob("*.parquet"):
        path.unlink()
    skipped = {(s.dataset, s.check): s.blocks for s in verify_folder(tmp_path).skipped}
    assert skipped[("folder_gas", "gas")] == 21


def test_the_catalogues_folder_proofs_are_declared_as_before() -> None:
    """What ``verify DIR`` proves offline, and with what, as its tables said before the declarations (issue 38)."""
    assert together_reads() == {
        "blocks": (),
        "transactions": ("blocks",),
        "receipts": ("blocks", "transactions", "logs"),
        "logs": ("blocks", "transactions", "receipts"),
        "uncles": ("blocks",),
    }
    offline = {name: d.proof.offline for name, d in DATASETS.items() if d.proof is not None and d.proof.offline}
    assert list(offline) == [
        "blocks", "transactions", "receipts", "logs", "uncles", "account_proofs", "storage_proofs",
    ]  # fmt: skip
    assert {name: how.group for name, how in offline.items() if how.group} == {
        "receipts": ("receipts", "logs"),
        "logs": ("receipts", "logs"),
        "account_proofs": ("account_proofs", "storage_proofs"),
        "storage_proofs": ("account_proofs", "storage_proofs"),
    }
    assert {name: how.lists.check for name, how in offline.items() if how.lists} == {
        "transactions": "transaction_hashes",
        "uncles": "uncles",
    }
    assert {name: how.across.dataset for name, how in offline.items() if how.across} == {"receipts": "transactions"}
    assert DATASETS["erc20_transfers"].proof is not None
    assert DATASETS["erc20_transfers"].proof.offline is None  # a series made of logs: proven from the raw logs


CATALOGUE_READS = {
    "blocks": ((), ()),
    "transactions": (("blocks",), ("blocks",)),
    "receipts": (("blocks", "transactions"), ("blocks", "transactions", "receipts")),
    "logs": (("blocks", "receipts"), ("blocks", "receipts")),
    "uncles": (("blocks",), ("blocks",)),
    "native_transfers": (("blocks", "transactions", "receipts"), ("blocks", "transactions", "receipts")),
    "address_appearances": (("blocks", "transactions"), ("blocks", "transactions", "receipts")),  # receipts fetched
    "four_byte_counts": (("blocks",), ("blocks", "transactions")),
    "erc20_transfers": (("blocks", "receipts"), ("blocks", "receipts")),
    "balances": (("blocks",), ("blocks",)),
    "account_proofs": (("blocks",), ("blocks",)),
    "storage_proofs": (("blocks",), ("blocks",)),
}
"""What each proof reads in an extraction and for stored rows, as the engine fetched it before the declarations (a
state read's eth_getProof answers and stored slots' accounts are fetched beside: tests/engine, tests/verify)."""


@pytest.mark.parametrize("name", list(CATALOGUE_READS))
def test_the_catalogues_proofs_read_what_they_read_before(name: str) -> None:
    dataset = DATASETS[name]
    assert dataset.proof is not None
    extracted, stored = CATALOGUE_READS[name]
    assert tuple(d.name for d in dataset.proof.read(dataset)) == extracted
    assert tuple(d.name for d in dataset.proof.read(dataset, stored=True)) == stored


def test_every_declared_check_is_a_public_function_of_verify() -> None:
    import chainframe.verify

    for dataset in DATASETS.values():
        if dataset.proof is None:
            continue
        module, _, function = dataset.proof.check.partition(":")
        assert module == "chainframe.verify", dataset.name
        assert function in chainframe.verify.__all__, dataset.name
        assert dataset.proof.doc, dataset.name


def test_no_engine_or_verify_module_asks_which_kind_of_proof_it_runs() -> None:
    """``Proof.X`` (the catalogue's kinds) is for declaring one; reading it outside a declaration is dispatching."""
    asked = []
    for room in ("engine", "verify"):
        for path in sorted((SRC / room).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "Proof":
                    asked.append(f"{path.relative_to(SRC)}:{node.lineno} reads Proof.{node.attr}")
    assert not asked, "declare it on the proof instead:\n" + "\n".join(asked)
