"""The probe's verdicts on real Hardhat and Ganache match what extraction then does, for receipts (by transaction:
neither serves eth_getBlockReceipts), uncles (Hardhat lacks the uncle method: blocks without uncles still read) and
call_traces (Hardhat refuses tracers, Ganache lacks debug_traceCall); and docs/nodes.md's "what works on which node" is
what the probe says of each node (anvil, Hardhat, Ganache), cell by cell."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from chainframe import probe
from chainframe.cli import main
from chainframe.devnet import Devnet
from chainframe.engine._probe import verdict


@pytest.mark.parametrize("dataset", ["receipts", "uncles", "call_traces"])
def test_the_probes_verdict_is_what_extraction_does(
    real_node: Devnet, dataset: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    found = probe(rpc=real_node.http_url)
    route = found.route(dataset)
    call = ["--call", json.dumps({"to": real_node.truth.contracts["Store"], "data": "0x"})]
    argv = ["extract", dataset, "--blocks", "1:4", "--rpc", real_node.http_url, "--out", str(tmp_path),
            "--no-progress", *(call if dataset == "call_traces" else [])]  # fmt: skip
    worked = main(argv) == 0
    printed = capsys.readouterr()
    assert route.works == worked, (route, printed.out + printed.err)
    assert "eth_getBlockReceipts" in found.missing
    if dataset == "receipts":
        assert "eth_getTransactionReceipt" in route.route
    elif dataset == "uncles":
        assert worked
        assert ("lacks eth_getUncleByBlockNumberAndIndex" in route.note) == (real_node.node_name == "hardhat")
    else:
        assert not worked
        assert "debug_traceCall" in route.route
        assert ("lacks debug_traceCall" if real_node.node_name == "ganache" else "refuses") in route.note
        # Refused before any work, in one line: the dataset, the method, the node's own answer, what would serve it.
        (error,) = [line for line in printed.err.splitlines() if line.startswith("error:")]
        assert "call_traces: the node serves no way to read it (debug_traceCall callTracer); it answered" in error
        answer = "[-32700]" if real_node.node_name == "ganache" else "only supports the default tracer"
        assert answer in error
        assert error.endswith("a node that serves debug_traceCall callTracer would")
        assert not any(tmp_path.rglob("*.parquet"))


README = Path(__file__).parents[2] / "docs" / "nodes.md"  # the guide page the table moved to


def _readme_column(node: str) -> dict[str, str]:
    """The README table's cells for ``node`` (dataset -> cell), as ``scripts/node_table --write`` put them."""
    text = README.read_text()
    table = text.split("<!-- node_table: begin -->\n", 1)[1].split("<!-- node_table: end -->", 1)[0]
    lines = [line for line in table.splitlines() if line.startswith("|")]
    rows = [[c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]] for line in lines]
    header, body = rows[0], rows[2:]
    at = next(i for i, name in enumerate(header) if name.split()[0] == node)
    return {row[0]: row[at] for row in body}


def _readme_says(devnet: Devnet, node: str) -> None:
    found = probe(rpc=devnet.node.url)
    told = {r.dataset: verdict(r) for r in found.datasets}
    assert _readme_column(node) == told, "docs/nodes.md's table is stale: run scripts/node_table --write"
    lacks = f"- {node} ({found.client_version}) lacks: {', '.join(found.missing) or 'nothing probed'}"
    assert lacks in README.read_text()


def test_the_readme_table_is_what_the_probe_says_of_each_node(real_node: Devnet) -> None:
    _readme_says(real_node, real_node.node_name)


def test_the_readme_table_is_what_the_probe_says_of_anvil(devnet: Devnet) -> None:
    _readme_says(devnet, "anvil")
