"""A proof is declared on its dataset (issue 38): what it reads, what it proves and its check are data the engine and
``chainframe verify`` run as declared. A kind of proof defined here, in a test, on a test's dataset, is run by
``extract --verify`` and by ``verify --rpc`` with no engine or verify module changed; the catalogue's proofs read what
they read before, and no engine or verify module asks which kind of proof it runs."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import chainframe
from chainframe.cli import main
from chainframe.datasets import BLOCKS, DATASETS, Dataset, Proof, register, unregister
from chainframe.devnet import Devnet
from chainframe.engine import verify_reads, verify_stored
from chainframe.verify import Piece, check_same_rows, verify_tables
from tests.datasets.test_declaration import BlockGas

SRC = Path(chainframe.__file__).parent
GAS = ["block_number", "block_hash", "gas_used", "gas_limit"]


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
    register(PROVEN_GAS)
    try:
        yield PROVEN_GAS
    finally:
        unregister(PROVEN_GAS.name)


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


CATALOGUE_READS = {
    "blocks": ((), ()),
    "transactions": (("blocks",), ("blocks",)),
    "receipts": (("blocks", "transactions"), ("blocks", "transactions", "receipts")),
    "logs": (("blocks", "receipts"), ("blocks", "receipts")),
    "uncles": (("blocks",), ("blocks",)),
    "native_transfers": (("blocks", "transactions", "receipts"), ("blocks", "transactions", "receipts")),
    "address_appearances": (("blocks",), ("blocks", "transactions", "receipts")),
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
