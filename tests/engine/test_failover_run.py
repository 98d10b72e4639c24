"""A run given several endpoints, the first dead (connection refused) or a later one of another chain: it finishes,
its rows equal those of a run on the good endpoint alone, and its report and summary name what was set aside."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from chainframe.cli import main
from chainframe.devnet import Devnet, FaultRule, GatewaySettings
from chainframe.engine import RunReport, extract
from chainframe.rpc import Endpoint
from tests.rpc.test_failover import REFUSED, FakeNode, dead_url

MAIN = ("blocks", "transactions", "receipts", "logs")
BLOCKS = "0:80"


def _rows(out: Path, dataset: str) -> pa.Table:
    return pq.read_table(out / dataset)


def _same_rows(out: Path, reference: Path) -> None:
    for dataset in MAIN:
        got, want = _rows(out, dataset), _rows(reference, dataset)
        assert got.num_rows == want.num_rows > 0
        assert got.equals(want), dataset  # row by row, in file order


@pytest.fixture(scope="module")
def reference(devnet_session: Devnet, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same datasets extracted through the good endpoint alone."""
    out = tmp_path_factory.mktemp("reference")
    extract(list(MAIN), blocks=BLOCKS, out=out, rpc=devnet_session.http_url, progress=False)
    return out


def test_a_dead_first_endpoint_is_set_aside_and_the_run_is_exact(
    devnet: Devnet, reference: Path, tmp_path: Path
) -> None:
    dead = dead_url(devnet.key)
    report = extract(list(MAIN), blocks=BLOCKS, out=tmp_path, rpc=[dead, devnet.http_url], progress=False)
    _same_rows(tmp_path, reference)
    display = Endpoint.from_url(dead).display
    assert report.chain_id == devnet.truth.chain_id
    assert report.set_aside == {display: REFUSED}
    assert report.failovers == report.requests - 2  # all but the two chain id checks (the dead one's refused)
    summary = report.summary()
    assert f"  set aside: {display} ({REFUSED})" in summary.splitlines()
    assert f"  {report.failovers:,} requests answered by another endpoint than the first (failover)" in summary
    saved = sorted((tmp_path / ".chainframe" / "runs").glob("*.json"))
    assert [RunReport(**json.loads(p.read_text())).set_aside for p in saved] == [{display: REFUSED}]
    assert devnet.key not in summary + saved[0].read_text()


def test_a_fallback_of_another_chain_never_serves_the_run(devnet: Devnet, reference: Path, tmp_path: Path) -> None:
    assert devnet.gateway is not None
    other = FakeNode(chain_id=1)
    with other.serve() as port:
        wrong = f"http://127.0.0.1:{port}/v3/{devnet.key}"
        rule = FaultRule(kind="http_5xx", status=503, times=1, methods=("eth_getBlockReceipts",))
        devnet.gateway.configure(GatewaySettings(faults=(rule,)))  # the first endpoint fails once: failover
        report = extract(list(MAIN), blocks=BLOCKS, out=tmp_path, rpc=[devnet.http_url, wrong], progress=False)
    _same_rows(tmp_path, reference)
    assert other.methods == ["eth_chainId"]
    wrong_display = f"http://127.0.0.1:{port}/v3/<redacted>"
    assert report.set_aside[wrong_display] == f"serves chain 1, not {devnet.truth.chain_id}"
    assert report.failovers == 0
    assert f"  set aside: {wrong_display} (serves chain 1, not {devnet.truth.chain_id})" in report.summary()


def test_the_command_with_a_dead_first_rpc(
    devnet: Devnet, reference: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dead = dead_url(devnet.key)
    argv = ["extract", *MAIN, "--blocks", BLOCKS, "--rpc", dead, "--rpc", devnet.http_url, "--out", str(tmp_path),
            "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    _same_rows(tmp_path, reference)
    out, err = capsys.readouterr()
    assert f"  set aside: {Endpoint.from_url(dead).display} ({REFUSED})" in out.splitlines()
    assert "requests answered by another endpoint than the first (failover)" in out
    assert devnet.key not in out + err
