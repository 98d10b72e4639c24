"""``--chain-family NAME`` on ``extract``, ``verify`` and ``probe`` (and ``chain_family=``): the family reaches the
proofs, the run says which family it read the chain as and whether it assumed it, and bad names are refused before
any block is asked for (the devnet's gateway counts every call)."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from chainframe._errors import InputError
from chainframe.cli import main
from chainframe.devnet import Devnet
from chainframe.engine import extract, probe, verify_stored
from chainframe.rpc import Endpoint
from tests.conftest import SECOND_CHAIN_ID, SECOND_NETWORK

BLOCKS = "0:29"
"""Thirty blocks of the devnet's chain, one chunk: enough for every table to have rows, quick to prove."""
DATASETS = ["blocks", "transactions", "receipts", "logs"]
ISTHMUS = "from Isthmus an OP header's withdrawals_root is the L2ToL1MessagePasser's storage root"
"""Why the OP family skips a header's withdrawals root after Isthmus (every block of a chain its table does not date):
seen only if the family reached the proofs, since the devnet's chain id names no family."""


def _calls(devnet: Devnet) -> dict[str, int]:
    assert devnet.gateway is not None
    calls: dict[str, int] = devnet.gateway.stats()["calls"]
    return {method: n for method, n in calls.items() if n}


def _sepolia(devnet: Devnet) -> Endpoint:
    """The gateway's second network: an empty anvil with Sepolia's chain id, which the Ethereum family names."""
    return replace(Endpoint.from_url(devnet.http_url), host_header=f"{SECOND_NETWORK}.localhost")


@pytest.fixture(scope="module")
def extracted(devnet_session: Devnet, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Two runs of the same blocks with ``--verify``: the chain id's family (assumed) and ``--chain-family
    op-stack``; their summaries, reports and folders."""
    runs: dict[str, Any] = {}
    for name, flag in (("assumed", []), ("op-stack", ["--chain-family", "op-stack"])):
        out = tmp_path_factory.mktemp(name)
        report = out / "report.json"
        argv = ["extract", *DATASETS, "--blocks", BLOCKS, "--rpc", devnet_session.http_url, "--out", str(out),
                "--verify", "--no-progress", "--report", str(report), *flag]  # fmt: skip
        runs[name] = (main(argv), out, json.loads(report.read_text()))
    return runs


def test_without_the_flag_the_report_says_the_family_was_assumed(extracted: dict[str, Any]) -> None:
    code, _, report = extracted["assumed"]
    assert code == 0
    assert report["chain_id"] == 31337
    assert (report["chain_family"], report["chain_family_by"]) == ("ethereum", "assumed")
    assert not any(ISTHMUS in json.dumps(d.get("unverified", {})) for d in report["datasets"].values())


def test_the_named_family_reaches_the_proofs_of_extract_verify(extracted: dict[str, Any]) -> None:
    code, _, report = extracted["op-stack"]
    assert code == 0
    assert (report["chain_family"], report["chain_family_by"]) == ("op-stack", "user")
    unverified = report["datasets"]["blocks"]["unverified"]
    assert any("withdrawals_root" in check and ISTHMUS in why for check, why in unverified.items()), unverified
    assert report["datasets"]["receipts"]["verified_rows"] == report["datasets"]["transactions"]["rows"] > 0


def test_the_summary_line_names_the_family_and_how_it_was_chosen(
    devnet: Devnet, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for flag, line in (
        ([], "chain family ethereum, assumed: no family knows chain id 31337 (--chain-family names one)"),
        (["--chain-family", "ethereum"], "chain family ethereum, chosen with --chain-family"),
    ):
        out = tmp_path / str(len(flag))
        argv = ["extract", "blocks", "--blocks", "0:9", "--rpc", devnet.http_url, "--out", str(out), "--no-progress",
                *flag]  # fmt: skip
        assert main(argv) == 0
        assert re.search(rf"^  {re.escape(line)}$", capsys.readouterr().out, re.M)


def test_verify_dir_reads_the_named_family(extracted: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = extracted["assumed"]
    assert main(["verify", str(out)]) == 0  # all proven as Ethereum's
    assert "withdrawals_root" not in capsys.readouterr().out
    assert main(["verify", str(out), "--chain-family", "op-stack"]) == 3  # passed, the OP header's root skipped
    assert re.search(r"^skipped  blocks withdrawals_root for 30 blocks: from Isthmus", capsys.readouterr().out, re.M)


def test_a_name_no_family_has_is_refused_in_one_line_before_any_request(
    devnet: Devnet, extracted: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = extracted["assumed"]
    assert devnet.gateway is not None
    devnet.gateway.reset_stats()
    for argv in (
        ["extract", "blocks", "--blocks", "0:9", "--rpc", devnet.http_url, "--out", str(tmp_path)],
        ["extract", "blocks", "--blocks", "0:9", "--rpc", devnet.http_url, "--out", str(tmp_path), "--dry"],
        ["verify", str(out), "--rpc", devnet.http_url],
        ["verify", str(out)],
        ["probe", "--rpc", devnet.http_url],
    ):
        assert main([*argv, "--chain-family", "arbitrum"]) == 2, argv
        err = capsys.readouterr().err
        assert err == (
            "error: --chain-family 'arbitrum' names no chain family; the families are: ethereum, op-stack, "
            "arbitrum-nitro, polygon-pos, bsc, avalanche, scroll, mantle\n"
        ), argv
    assert _calls(devnet) == {}  # nothing was asked of the node
    assert not (tmp_path / "blocks").exists()


def test_a_family_a_known_chain_id_denies_is_refused_after_eth_chainid_only(
    devnet: Devnet, extracted: dict[str, Any], tmp_path: Path
) -> None:
    sepolia = _sepolia(devnet)
    _, out, _ = extracted["assumed"]
    denied = rf"^chain {SECOND_CHAIN_ID} \(Sepolia\) is ethereum, not op-stack: drop --chain-family or give ethereum "
    calls: list[Any] = [
        lambda: extract("blocks", blocks="0:0", out=tmp_path, rpc=sepolia, chain_family="op-stack", progress=False),
        lambda: verify_stored(out, rpc=sepolia, chain_family="op-stack"),
        lambda: probe(rpc=sepolia, chain_family="op-stack"),
    ]
    for call in calls:
        assert devnet.gateway is not None
        devnet.gateway.reset_stats()
        with pytest.raises(InputError, match=denied + r"\(refused after eth_chainId, before any block was asked for\)"):
            call()
        assert _calls(devnet) == {"eth_chainId": 1}  # the refusal came before any block or receipt was asked for
    assert not (tmp_path / "blocks").exists()
    agreeing = extract("blocks", blocks="0:0", out=tmp_path, rpc=sepolia, chain_family="ethereum", progress=False)
    assert (agreeing.chain_id, agreeing.chain_family, agreeing.chain_family_by) == (SECOND_CHAIN_ID, "ethereum", "user")
    assert "chain family ethereum, chosen with --chain-family" in agreeing.summary()
    by_id = extract("blocks", blocks="0:0", out=tmp_path, rpc=sepolia, progress=False)
    assert (by_id.chain_family, by_id.chain_family_by) == ("ethereum", "chain id")
    assert "chain family" not in by_id.summary()  # an Ethereum chain by its id: nothing to say
    as_op = replace(by_id, chain_id=10, chain_family="op-stack")  # another family by its id is said
    assert "\n  chain family op-stack, by the chain id (OP Mainnet)\n" in as_op.summary()


def test_an_unknown_chain_id_takes_any_family(devnet: Devnet) -> None:
    found = probe(rpc=devnet.http_url, chain_family="arbitrum-nitro")
    assert (found.family.name, found.family.assumed, found.family.chosen) == ("arbitrum-nitro", False, True)
    assert any("effective_gas_price" in what for what in found.family.skipped), found.family.skipped
