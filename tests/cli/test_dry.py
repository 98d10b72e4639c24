"""``extract --dry``: the plan a run would make, with the node asked only what the range needs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from chainframe.cli import main
from chainframe.devnet import Devnet, GatewaySettings
from chainframe.rpc import PRICE_TABLES


def _dry(capsys: pytest.CaptureFixture[str], *argv: str) -> list[str]:
    assert main(["extract", *argv, "--dry"]) == 0
    return capsys.readouterr().out.splitlines()


def _run_within_10_percent(devnet: Devnet, argv: list[str], printed: str) -> None:
    """The run of ``argv`` makes and pays what --dry said (``printed``'s total), within 10%, by the gateway's count."""
    assert devnet.gateway is not None
    found = re.search(r"^  total: ([\d,]+) calls, ([\d,]+) credits", printed, re.M)
    assert found is not None, printed
    calls, credits = (int(g.replace(",", "")) for g in found.groups())
    devnet.gateway.reset_stats()
    assert main(["extract", *argv, "--no-progress"]) == 0
    stats = devnet.gateway.stats()
    real_calls, real_credits = sum(stats["calls"].values()), stats["credits"]
    assert abs(calls - real_calls) <= 0.1 * real_calls, (calls, stats["calls"])
    assert abs(credits - real_credits) <= 0.1 * real_credits, (credits, real_credits)


def test_the_plan_asks_only_the_chain_state_and_writes_nothing(
    devnet: Devnet, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert devnet.gateway is not None
    out = tmp_path / "data"
    lines = _dry(capsys, "blocks", "receipts", "logs", "--blocks", "0:239", "--rpc", devnet.http_url, "--out", str(out),
                 "--chunk-size", "100", "--credits-per-second", "500")  # fmt: skip
    assert lines[0].startswith(f"plan: blocks 0..239 (head {devnet.truth.head}) into {out}; nothing fetched")
    above = 239 - (devnet.truth.head - 64)  # blocks above the finalized one: a run reads their headers one by one
    own = 6 + above + 2 * 3  # chain state and series check, those headers, each chunk's two ends
    assert f"3 new; 0 stored; 240 blocks to fetch: 240 eth_getBlockByNumber calls (+{own} the run's own)" in lines[1]
    assert "240 eth_getBlockReceipts calls" in lines[2]
    assert re.search(r"240 blocks to fetch: ~\d+ eth_getLogs calls \(\+\d+ the run's own\), [\d,]+ credits", lines[3])
    density = r"  +eth_getLogs pieces from the logs of 20 sampled blocks: [\d.]+ logs, [\d.]+ kB a block"
    assert re.match(density, lines[4])
    assert re.match(r"  total: [\d,]+ calls, [\d,]+ credits \(Infura's weights\)$", lines[5])
    assert re.match(r"  at 500 credits/s: [\d,]+ s$", lines[6])
    assert "eth_getBlockByNumber; then the finalized block and 4 small eth_getLogs (the logs' density)" in lines[7]
    # The chain state in one batch, the finalized block, and the logs sampled in one batch: nothing else.
    calls = {"eth_chainId": 1, "eth_blockNumber": 1, "eth_getBlockByNumber": 2, "eth_getLogs": 4}
    assert devnet.gateway.stats()["calls"] == calls
    assert not out.exists()


@pytest.mark.parametrize(
    "dataset", ["blocks", "receipts", "logs", "erc20_transfers", "traces", "address_appearances", "four_byte_counts"]
)
def test_the_predicted_calls_and_credits_are_the_runs_within_10_percent(
    devnet: Devnet, tmp_path: Path, capsys: pytest.CaptureFixture[str], dataset: str
) -> None:
    """On the test chain behind the gateway with a credit budget (so a logs piece is one call), as Infura's users run:
    what --dry says is what the gateway then counts and bills (scripts/bench dry: the same on the benchmark chain)."""
    assert devnet.gateway is not None
    devnet.gateway.configure(GatewaySettings(credits_per_second=1e6))
    argv = [dataset, "--blocks", "0:239", "--rpc", devnet.http_url, "--out", str(tmp_path), "--chunk-size", "100",
            "--credits-per-second", "1000000"]  # fmt: skip
    printed = "\n".join(_dry(capsys, *argv))
    _run_within_10_percent(devnet, argv, printed)


def test_the_trace_familys_gas_reads_are_predicted_by_the_runs_pacing(
    devnet: Devnet, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """traces reads its top frames' gas from the no-step tracer and the headers unless credits price the receipts
    lower: with no credit budget --dry names those two reads, not the receipts, and the calls the gateway then counts
    are within 10% of its total (with Infura's credits, the case above: the receipts)."""
    assert devnet.gateway is not None
    argv = ["traces", "--blocks", "0:239", "--rpc", devnet.http_url, "--out", str(tmp_path), "--chunk-size", "100"]
    printed = "\n".join(_dry(capsys, *argv))
    assert "+ 240 debug_traceBlockByNumber + 240 eth_getBlockByNumber calls" in printed, printed
    assert "eth_getBlockReceipts" not in printed.split("  total:")[0], printed
    found = re.search(r"^  total: ([\d,]+) calls", printed, re.M)
    assert found is not None, printed
    calls = int(found.group(1).replace(",", ""))
    devnet.gateway.reset_stats()
    assert main(["extract", *argv, "--no-progress"]) == 0
    counted = devnet.gateway.stats()["calls"]
    assert counted.get("eth_getBlockReceipts", 0) <= 1, sorted(counted.items())  # at most the routes' check's
    assert abs(calls - sum(counted.values())) <= 0.1 * sum(counted.values()), (calls, counted)


@pytest.mark.parametrize("verify", [[], ["--verify"]])
def test_traces_by_credits_beside_a_dataset_derived_from_the_full_blocks_is_priced_as_it_runs(
    devnet: Devnet, tmp_path: Path, capsys: pytest.CaptureFixture[str], verify: list[str]
) -> None:
    """four_byte_counts reads the full blocks through transactions' fetch, and traces paced by credits reads them
    too: the run asks them once for both, and --dry counts them once (it counted them twice: 538 calls against the
    run's 360, 880 against 531 verifying)."""
    assert devnet.gateway is not None
    devnet.gateway.configure(GatewaySettings(credits_per_second=1e6))
    last = min(199, devnet.truth.head - 70)  # below the finalized block: shared
    argv = ["four_byte_counts", "traces", "--blocks", f"0:{last}", "--rpc", devnet.http_url, "--out", str(tmp_path),
            "--chunk-size", "100", "--credits-per-second", "1000000", *verify]  # fmt: skip
    _run_within_10_percent(devnet, argv, "\n".join(_dry(capsys, *argv)))


@pytest.mark.parametrize(
    "datasets", [["logs"], ["transactions", "receipts"], ["blocks", "transactions", "receipts", "logs"]]
)
def test_what_verify_adds_is_the_runs_within_10_percent(
    devnet: Devnet, tmp_path: Path, capsys: pytest.CaptureFixture[str], datasets: list[str]
) -> None:
    """--verify's proofs read headers, bodies and receipts: counted once per block for the run (the series share
    them below the finalized block), only those no series fetches itself (none, for the four main datasets)."""
    assert devnet.gateway is not None
    devnet.gateway.configure(GatewaySettings(credits_per_second=1e6))
    last = min(199, devnet.truth.head - 70)  # below the finalized block: shared
    argv = [*datasets, "--blocks", f"0:{last}", "--rpc", devnet.http_url, "--out", str(tmp_path), "--chunk-size",
            "100", "--credits-per-second", "1000000", "--verify"]  # fmt: skip
    printed = "\n".join(_dry(capsys, *argv))
    found = re.search(r"^  total: ([\d,]+) calls, ([\d,]+) credits", printed, re.M)
    assert found is not None, printed
    calls, credits = (int(g.replace(",", "")) for g in found.groups())
    added = re.search(r"^  --verify: (.*) \(", printed, re.M)
    assert added is not None, printed
    if len(datasets) == 4:
        assert added.group(1) == "no calls"
    else:
        assert "eth_getBlockByNumber" in added.group(1)
    devnet.gateway.reset_stats()
    assert main(["extract", *argv, "--no-progress"]) == 0
    stats = devnet.gateway.stats()
    real_calls, real_credits = sum(stats["calls"].values()), stats["credits"]
    assert abs(calls - real_calls) <= 0.1 * real_calls, (calls, stats["calls"], printed)
    assert abs(credits - real_credits) <= 0.1 * real_credits, (credits, real_credits)


def test_the_plan_skips_what_is_stored_and_extends_the_tip(
    devnet: Devnet, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert devnet.gateway is not None
    base = ["blocks", "--rpc", devnet.http_url, "--out", str(tmp_path), "--chunk-size", "100"]
    assert main(["extract", *base, "--blocks", "0:149", "--no-progress"]) == 0
    capsys.readouterr()
    before = sorted(p.name for p in (tmp_path / "blocks").iterdir())
    devnet.gateway.reset_stats()
    lines = _dry(capsys, *base, "--blocks", "-100:")  # to the finalized block, asked for
    assert lines[0].startswith(f"plan: blocks {devnet.truth.head - 64 - 99}..{devnet.truth.head - 64} ")
    assert "chunks: 1 extend; 1 stored; 27 blocks to fetch: 27 eth_getBlockByNumber" in lines[1]
    assert "eth_chainId, eth_blockNumber, eth_getBlockByNumber; then the finalized block." in lines[-1]  # as a run
    assert devnet.gateway.stats()["calls"] == {"eth_chainId": 1, "eth_blockNumber": 1, "eth_getBlockByNumber": 2}
    assert sorted(p.name for p in (tmp_path / "blocks").iterdir()) == before


def test_the_plan_counts_calls_per_address_and_refuses_what_a_run_refuses(
    devnet: Devnet, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store, nest = devnet.truth.contracts["Store"], devnet.truth.contracts["Nest"]
    lines = _dry(capsys, "account_proofs", "--blocks", "200:239", "--addresses", store, nest, "--rpc", devnet.http_url,
                 "--out", str(tmp_path))  # fmt: skip
    assert "40 blocks to fetch: 80 eth_getProof calls (+" in lines[1]
    code = main(["extract", "logs", "--blocks", "0:10", "--addresses", store, "--rpc", "http://127.0.0.1:9",
                 "--out", str(tmp_path), "--dry"])  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert "dataset 'logs' takes only address" in err
    assert "got addresses" in err


def test_a_run_shared_by_several_endpoints_is_priced_by_each_ones_table(
    devnet: Devnet, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An endpoints file of three budgets in three providers' units: --dry prices the whole run by each one's table
    (Alchemy's compute units within 10% of the calls the gateway then counts, priced by that table), gives each the
    share of the calls its budget pays for, and the time at the sum of their rates; the URLs' keys stay redacted."""
    assert devnet.gateway is not None
    budgets = [("infura", "credits_per_second", 1000), ("alchemy", "credits_per_second", 2000),
               ("quicknode", "requests_per_second", 50)]  # fmt: skip
    endpoints = tmp_path / "endpoints.toml"
    endpoints.write_text("".join(f'[[endpoint]]\nurl = "{devnet.http_url}"\nprices = "{table}"\n{kind} = {rate}\n'
                                 for table, kind, rate in budgets))  # fmt: skip
    argv = ["blocks", "receipts", "logs", "--blocks", "0:199", "--out", str(tmp_path / "out"), "--chunk-size", "100"]
    printed = "\n".join(_dry(capsys, *argv, "--endpoints", str(endpoints)))
    assert devnet.key not in printed
    total = re.search(r"^  total: ([\d,]+) calls, ([\d,]+) credits", printed, re.M)
    assert total is not None, printed
    calls, credits = (int(g.replace(",", "")) for g in total.groups())
    found = re.findall(r"^    \S+/v3/<redacted>: the whole run ([\d,]+) by (\w+) prices; .*?about (\d+)% of the calls",
                       printed, re.M)  # fmt: skip
    assert [table for _, table, _ in found] == [table for table, _, _ in budgets], printed
    whole = {table: int(cost.replace(",", "")) for cost, table, _ in found}
    assert whole["infura"] == credits  # Infura's table is the one the total is priced by
    rates = [rate / (calls if kind == "requests_per_second" else whole[table]) for table, kind, rate in budgets]
    shares = [int(share) for _, _, share in found]
    assert shares == [round(100 * r / sum(rates)) for r in rates], printed
    together = re.search(r"^  together: ([\d,]+) s, the sum of their budgets", printed, re.M)
    assert together is not None, printed
    assert int(together.group(1)) == round(1 / sum(rates))

    devnet.gateway.configure(GatewaySettings(credits_per_second=1e6))  # a credit budget, as --dry assumed: one call
    devnet.gateway.reset_stats()  # a logs piece
    assert main(["extract", *argv, "--rpc", devnet.http_url, "--credits-per-second", "1000000", "--no-progress"]) == 0
    sent = devnet.gateway.stats()["calls"]
    alchemy = PRICE_TABLES["alchemy"]
    units = sum(n * alchemy.costs.get(method, alchemy.default) for method, n in sent.items())
    assert abs(whole["alchemy"] - units) <= 0.1 * units, (whole["alchemy"], units, sent)


def test_an_abis_series_per_function_are_priced_as_one_read(
    devnet: Devnet, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--abi splits transactions and traces into a series per function, which read each piece once for all
    (engine._pieces): --dry prices the blocks once, says which series the others read with, and its total is within
    10% of what the gateway then counts and bills."""
    import json

    import chainframe.devnet

    assert devnet.gateway is not None
    artifacts = Path(chainframe.devnet.__file__).parent / "contracts" / "artifacts.json"
    abi = tmp_path / "Token.json"
    abi.write_text(json.dumps(json.loads(artifacts.read_text())["contracts"]["Token"]["abi"]))
    devnet.gateway.configure(GatewaySettings(credits_per_second=1e6))
    argv = ["transactions", "traces", "--abi", str(abi), "--blocks", "0:239", "--rpc", devnet.http_url, "--out",
            str(tmp_path / "out"), "--credits-per-second", "1000000"]  # fmt: skip
    printed = "\n".join(_dry(capsys, *argv))
    series = [line for line in printed.splitlines() if "blocks to fetch" in line]
    assert len(series) > 10, printed  # the Token's functions, in transactions and in traces
    for dataset in ("transactions", "traces"):
        mine = [line for line in series if line.lstrip().startswith(f"{dataset}__")]
        assert sum("read once with" not in line for line in mine) == 1, printed
    _run_within_10_percent(devnet, argv, printed)
