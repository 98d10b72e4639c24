"""Shared fixtures: one real devnet (anvil + gateway) for the whole session, with settings reset per test."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import Any

# Before numpy's first import, here and in every process the suite starts: OpenBLAS starts a thread per core when
# numpy is imported. Nothing in the suite does linear algebra; 20 imports of numpy took 6.4 CPU-s with those threads
# and 4.4 without (0.1 CPU-s each, in every xdist worker, Dask process, kernel and script; `chainframe` commands set
# it themselves, in cli/_process.prepare).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import pytest

from chainframe.devnet import Devnet, GatewaySettings
from tests.store.s3server import moto_server

# Dask's clocks for every process of the run, its own and those it starts (schedulers, workers, `chainframe`
# commands, kernels inherit the environment): no statistical profiler on the workers (a stack sample of each thread
# every 10 ms, for a dashboard no test reads) and the event loop's health looked at once a second, not every 20 ms
# (it only times the ticks, for a warning). Idle for 30 s, a worker took 1.53 CPU-s with Dask's defaults and 0.38
# with these, a scheduler 0.81 and 0.22.
for _name, _value in (("DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED", "False"),
                      ("DASK_DISTRIBUTED__ADMIN__TICK__INTERVAL", "1s")):  # fmt: skip
    os.environ.setdefault(_name, _value)
if "dask" in sys.modules:  # read at dask's import: a plugin that imported it first reads them again
    import dask.config

    dask.config.refresh()

SECOND_NETWORK = "sepolia"
SECOND_CHAIN_ID = 11155111


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def devnet_session() -> Iterator[Devnet]:
    with Devnet(extra_networks={SECOND_NETWORK: SECOND_CHAIN_ID}) as devnet:
        yield devnet


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """moto's S3 server, one process for the session (a worker's): six modules use it, each through its own module's
    ``s3_endpoint`` (tests/store/test_s3.py), and each start costs 1 CPU-s and seconds of wall."""
    with moto_server(tmp_path_factory.mktemp("moto") / "moto.log") as url:
        yield url


@pytest.fixture
def devnet(devnet_session: Devnet) -> Iterator[Devnet]:
    """The session devnet with default gateway settings; whatever a test configures is undone after it."""
    assert devnet_session.gateway is not None
    devnet_session.gateway.configure(GatewaySettings())
    devnet_session.gateway.reset_stats()
    yield devnet_session
    devnet_session.gateway.configure(GatewaySettings())


SHARED_SCOPES = ("tests/nodes/",)
"""Folders whose files share a session fixture too costly to start on every worker: their files are one unit of work
for xdist (tests/nodes: a Hardhat and a Ganache with the workload built on each, 13 CPU-s the pair)."""


def work_unit(nodeid: str) -> str:
    """The unit of work that ``scripts/test`` gives one xdist worker: a test's file, or its shared folder."""
    path = nodeid.split("::", 1)[0]
    return next((folder for folder in SHARED_SCOPES if path.startswith(folder)), path)


def pytest_configure(config: pytest.Config) -> None:
    """With ``CPU_PROFILE_DIR`` set (``scripts/suite-cpu``), each test's CPU is recorded there."""
    if os.environ.get("CPU_PROFILE_DIR"):
        from tests import cpu_profile

        config.pluginmanager.register(cpu_profile, "cpu_profile")


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist: `pytest -p no:xdist` still runs
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """With ``--dist loadfile``, the units of ``work_unit`` instead of files."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling  # type: ignore[import-untyped]  # no stubs

    class Units(LoadFileScheduling):  # type: ignore[misc]  # an untyped base
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    return Units(config, log)


@pytest.hookimpl(trylast=True)  # after pytest groups the tests of a parametrized session fixture
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On xdist workers (scripts/test runs files on several), the units holding ``slow`` tests come first, then the
    others by their number of tests: a unit (a file, or a folder of ``SHARED_SCOPES``) keeps its module and session
    fixtures (devnets, S3 servers, Dask clusters) on one worker, and a long unit started last would be the run's tail.
    Inside a unit, pytest's order stays, which starts each instance of a parametrized session fixture once (all of a
    folder's Hardhat tests, then its Ganache tests). Every worker collects alike, so every worker orders alike."""
    if not hasattr(config, "workerinput"):
        return
    units: dict[str, list[pytest.Item]] = {}
    for item in items:
        units.setdefault(work_unit(item.nodeid), []).append(item)
    order = sorted(
        units.values(), key=lambda tests: (not any(t.get_closest_marker("slow") for t in tests), -len(tests))
    )
    items[:] = [item for tests in order for item in tests]
