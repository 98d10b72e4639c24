"""eth_getLogs limits as Infura enforces them: results, time, parameters, and blockHash exclusivity."""

from __future__ import annotations

import pytest

from chainframe.devnet import Devnet, GatewaySettings, LogLimits
from tests.devnet.rpc import call, post, result

WHOLE_CHAIN = {"fromBlock": "0x0", "toBlock": "latest"}


def _logs(devnet: Devnet, flt: dict[str, object]) -> dict[str, object]:
    answer: dict[str, object] = post(devnet.http_url, call("eth_getLogs", flt)).json()
    return answer


def _limit(devnet: Devnet, **limits: object) -> None:
    assert devnet.gateway is not None
    devnet.gateway.configure(GatewaySettings(limits=LogLimits(**limits)))  # type: ignore[arg-type]


def test_whole_chain_exceeds_infuras_10000_results(devnet: Devnet) -> None:
    assert devnet.truth.log_count > 10_000
    error = _logs(devnet, WHOLE_CHAIN)["error"]
    assert error["code"] == -32005  # type: ignore[index]
    assert error["message"].startswith("query returned more than 10000 results. Try with this block range [")  # type: ignore[index]


def test_the_hinted_range_is_the_widest_that_fits(devnet: Devnet) -> None:
    error = _logs(devnet, WHOLE_CHAIN)["error"]
    data = error["data"]  # type: ignore[index]
    assert data["limit"] == 10_000
    assert data["from"] == "0x0"
    assert f"[{data['from']}, {data['to']}]." in error["message"]  # type: ignore[index]
    hinted = int(data["to"], 16)
    per_block = devnet.truth.logs_per_block()
    assert sum(per_block[: hinted + 1]) <= 10_000 < sum(per_block[: hinted + 2])
    fits = _logs(devnet, {"fromBlock": "0x0", "toBlock": data["to"]})
    assert len(fits["result"]) == sum(per_block[: hinted + 1])  # type: ignore[arg-type]


def test_limit_is_configurable_and_hint_optional(devnet: Devnet) -> None:
    _limit(devnet, max_results=50, hint=False)
    assert _logs(devnet, WHOLE_CHAIN)["error"] == {  # type: ignore[comparison-overlap]
        "code": -32005,
        "message": "query returned more than 50 results",
    }
    quiet = next(n for n, logs in enumerate(devnet.truth.logs_per_block()) if 0 < logs <= 50)
    assert len(_logs(devnet, {"fromBlock": hex(quiet), "toBlock": hex(quiet)})["result"]) <= 50  # type: ignore[arg-type]


def test_single_block_over_the_limit_hints_that_block(devnet: Devnet) -> None:
    _limit(devnet, max_results=10)
    heavy = next(n for n, logs in enumerate(devnet.truth.logs_per_block()) if logs > 10)
    error = _logs(devnet, {"fromBlock": hex(heavy), "toBlock": hex(heavy + 3)})["error"]
    assert error["data"] == {"from": f"0x{heavy:X}", "limit": 10, "to": f"0x{heavy:X}"}  # type: ignore[index]


def test_deterministic_timeout_by_span(devnet: Devnet) -> None:
    _limit(devnet, timeout_blocks=20)
    assert _logs(devnet, {"fromBlock": "0x1", "toBlock": "0x15"})["error"] == {  # type: ignore[comparison-overlap]
        "code": -32005,
        "message": "query timeout exceeded",
    }
    assert "result" in _logs(devnet, {"fromBlock": "0x1", "toBlock": "0x14"})
    assert devnet.gateway is not None
    assert devnet.gateway.stats()["limit_errors"] == {"timeout": 1}


def test_block_range_limit(devnet: Devnet) -> None:
    _limit(devnet, max_range=100)
    assert _logs(devnet, {"fromBlock": "0x0", "toBlock": "0x64"})["error"] == {  # type: ignore[comparison-overlap]
        "code": -32602,
        "message": "range 101 exceeds limit of 100",
    }
    assert "result" in _logs(devnet, {"fromBlock": "0x1", "toBlock": "0x64"})


def test_real_time_budget(devnet: Devnet) -> None:
    _limit(devnet, timeout=0.001)
    error = _logs(devnet, WHOLE_CHAIN)["error"]
    assert error == {"code": -32005, "message": "query timeout exceeded"}


@pytest.mark.parametrize(("addresses", "refused"), [(5_000, False), (5_001, True)])
def test_parameter_limit(devnet: Devnet, addresses: int, refused: bool) -> None:
    flt = {"fromBlock": "0x1", "toBlock": "0x2", "address": ["0x" + f"{i:040x}" for i in range(addresses)]}
    answer = _logs(devnet, flt)
    if refused:
        assert answer["error"]["code"] == -32602  # type: ignore[index]
        assert "5001" in answer["error"]["message"]  # type: ignore[index]
        assert "5000" in answer["error"]["message"]  # type: ignore[index]
    else:
        assert answer["result"] == []


def test_topics_count_as_parameters(devnet: Devnet) -> None:
    _limit(devnet, max_params=3)
    topic = "0x" + "11" * 32
    assert "result" in _logs(devnet, {"fromBlock": "0x1", "toBlock": "0x1", "topics": [[topic, topic], None, topic]})
    refused = _logs(devnet, {"fromBlock": "0x1", "toBlock": "0x1", "topics": [[topic, topic], topic, topic]})
    assert refused["error"]["code"] == -32602  # type: ignore[index]


def test_block_hash_excludes_a_range(devnet: Devnet) -> None:
    block_hash = result(devnet.http_url, "eth_getBlockByNumber", "0x3", False)["hash"]
    for extra in ({"fromBlock": "0x3"}, {"toBlock": "0x3"}):
        answer = _logs(devnet, {"blockHash": block_hash, **extra})
        assert answer["error"]["code"] == -32602  # type: ignore[index]
        assert "BlockHash" in answer["error"]["message"]  # type: ignore[index]
    assert len(_logs(devnet, {"blockHash": block_hash})["result"]) == devnet.truth.logs_per_block()[3]  # type: ignore[arg-type]


def test_limits_apply_inside_batches_per_item(devnet: Devnet) -> None:
    _limit(devnet, max_results=100)
    answers = post(
        devnet.http_url,
        [
            call("eth_getLogs", WHOLE_CHAIN, id=1),
            call("eth_getLogs", {"fromBlock": "0x2", "toBlock": "0x2"}, id=2),
        ],
    ).json()
    by_id = {a["id"]: a for a in answers}
    assert by_id[1]["error"]["code"] == -32005
    assert len(by_id[2]["result"]) == devnet.truth.logs_per_block()[2]
