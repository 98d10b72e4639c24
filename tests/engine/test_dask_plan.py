"""What a Dask run's workers are given of an endpoints file (issue 42): each worker paces itself by its share of the
budget, in the price table, of the endpoint it starts on, not by the run's single pacing. No cluster is needed to
read the plan the workers get; tests/engine/test_dask.py runs them."""

from __future__ import annotations

from chainframe.engine._client import own_pacings
from chainframe.engine._dask import WorkerPlan, no_progress_timeout
from chainframe.rpc import PRICE_TABLES, Endpoint, Pacing, Provider

ALCHEMY = Pacing.priced("alchemy", credits_per_second=300)
RUN = Pacing(credits_per_second=100)
ENDPOINTS = (Endpoint.from_url("https://one.example/v3/aaaa1111"), Endpoint.from_url("https://two.example/v3/bbbb2222"))


def _plan() -> WorkerPlan:
    """Four workers over two endpoints: the first with Alchemy's prices and 300 units/s, the second with none of its
    own (the run's 100 credits/s at Infura's)."""
    rpc = [Provider(ENDPOINTS[0], ALCHEMY), ENDPOINTS[1]]  # the second without a budget of its own: the run's
    return WorkerPlan(
        run="r", endpoints=ENDPOINTS, pacings=tuple(own_pacings(ENDPOINTS, rpc)), workers=4,
        client_options={"pacing": RUN}, index={"w0": 0, "w1": 1, "w2": 2, "w3": 3},
    )  # fmt: skip


def test_each_worker_paces_by_its_share_of_its_own_endpoints_budget_and_prices() -> None:
    plan = _plan()
    assert own_pacings(ENDPOINTS, [Provider(ENDPOINTS[0], ALCHEMY), ENDPOINTS[1]]) == [ALCHEMY, None]
    for worker, endpoint, budget, table in (("w0", 0, 150, "alchemy"), ("w2", 0, 150, "alchemy"),
                                            ("w1", 1, 50, "infura"), ("w3", 1, 50, "infura")):  # fmt: skip
        client = plan.client(worker)
        assert client.endpoint == ENDPOINTS[endpoint]
        pacing = client.pacer.pacing
        assert pacing.credits_per_second == budget  # two workers start on each endpoint: half its budget each
        assert dict(pacing.credit_costs) == dict(PRICE_TABLES[table].costs)


def test_the_no_progress_bound_waits_for_the_slowest_endpoints_share() -> None:
    plan = _plan()
    plan = WorkerPlan(run="r", endpoints=plan.endpoints, pacings=plan.pacings, workers=4,
                      client_options={"pacing": RUN, "batch_size": 10})  # fmt: skip
    # A batch of 10 of each table's dearest call at the worker's share: Infura's 1,000 credits each and 80 for the
    # batch at 50 credits/s (201.6 s) is slower than Alchemy's at 150 units/s.
    alchemy = PRICE_TABLES["alchemy"]
    assert 10 * max(alchemy.costs.values()) / 150 < 201.6
    assert no_progress_timeout(plan) == 120 + 900 + (10 * 1000 + 80) / 50
