"""Shared fixtures: one real devnet (anvil + gateway) for the whole session, with settings reset per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from chainframe.devnet import Devnet, GatewaySettings

SECOND_NETWORK = "sepolia"
SECOND_CHAIN_ID = 11155111


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def devnet_session() -> Iterator[Devnet]:
    with Devnet(extra_networks={SECOND_NETWORK: SECOND_CHAIN_ID}) as devnet:
        yield devnet


@pytest.fixture
def devnet(devnet_session: Devnet) -> Iterator[Devnet]:
    """The session devnet with default gateway settings; whatever a test configures is undone after it."""
    assert devnet_session.gateway is not None
    devnet_session.gateway.configure(GatewaySettings())
    devnet_session.gateway.reset_stats()
    yield devnet_session
    devnet_session.gateway.configure(GatewaySettings())


@pytest.hookimpl(trylast=True)  # after pytest groups the tests of a parametrized session fixture
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On xdist workers (scripts/test runs files on several), the files holding ``slow`` tests come first, then the
    others by their number of tests: a file is a unit of work that keeps its module fixtures (devnets, S3 servers, Dask
    clusters) on one worker, and a long file started last would be the run's tail. Every worker collects alike, so
    every worker orders alike."""
    if not hasattr(config, "workerinput"):
        return
    modules: dict[str, list[pytest.Item]] = {}
    for item in items:
        modules.setdefault(item.nodeid.split("::")[0], []).append(item)
    order = sorted(
        modules.values(), key=lambda tests: (not any(t.get_closest_marker("slow") for t in tests), -len(tests))
    )
    items[:] = [item for tests in order for item in tests]
