"""A pytest plugin that records what each test costs in CPU, its child processes included (nodes, servers, Dask
workers, `chainframe` commands, kernels): on two cores the suite's wall time follows its CPU, and pytest's durations
count a test's waits, not its cost. tests/conftest.py loads it when ``CPU_PROFILE_DIR`` is set; each pytest process
(every xdist worker) writes ``[[nodeid, cpu_seconds, wall_seconds], ...]`` to a JSON file there.
``scripts/suite-cpu`` runs the whole suite with it and prints the files by CPU.

A test's CPU is counted across its setup, call and teardown: this process, the children it has reaped, and every
descendant still alive (their own reaped children included), before and after. A child that outlives its test (a
module's node) is counted in the tests it ran beside; one reaped by another parent (a daemon) is lost."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Generator
from pathlib import Path

import psutil
import pytest

_costs: list[tuple[str, float, float]] = []


def _tree_cpu() -> float:
    me = psutil.Process()
    own = me.cpu_times()
    total = own.user + own.system + own.children_user + own.children_system
    for child in me.children(recursive=True):
        try:
            times = child.cpu_times()
        except psutil.Error:  # ended between the listing and the reading
            continue
        total += times.user + times.system + times.children_user + times.children_system
    return total


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, None, None]:
    cpu, wall = _tree_cpu(), time.monotonic()
    yield
    _costs.append((item.nodeid, _tree_cpu() - cpu, time.monotonic() - wall))


def pytest_sessionfinish(session: pytest.Session) -> None:
    folder = Path(os.environ.get("CPU_PROFILE_DIR", "."))
    name = os.environ.get("PYTEST_XDIST_WORKER", "main")
    (folder / f"cpu-{name}-{os.getpid()}.json").write_text(json.dumps(_costs))
