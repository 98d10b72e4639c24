"""The probe's verdicts on real Hardhat and Ganache match what extraction then does, for receipts (by transaction:
neither serves eth_getBlockReceipts) and call_traces (Hardhat refuses tracers, Ganache lacks debug_traceCall)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chainframe import probe
from chainframe.cli import main
from chainframe.devnet import Devnet


@pytest.mark.parametrize("dataset", ["receipts", "call_traces"])
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
    else:
        assert not worked
        assert "debug_traceCall" in route.route
        assert ("lacks debug_traceCall" if real_node.node_name == "ganache" else "refuses") in route.note
