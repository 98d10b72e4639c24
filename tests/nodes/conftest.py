"""Real Hardhat and Ganache nodes, each holding the devnet workload behind the gateway: one of each per session.

The workload is built on each at start (seconds), so every test reads that node's own chain; results are compared
with that node's own answers, never with anvil's or each other's (the same plan reverts differently per node)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from chainframe.devnet import NODES_WORKLOAD, Devnet, GatewaySettings, NodeName

OTHER_NODES: tuple[NodeName, ...] = ("hardhat", "ganache")


@pytest.fixture(scope="session", params=OTHER_NODES)
def node_devnet(request: pytest.FixtureRequest) -> Iterator[Devnet]:
    with Devnet(node=request.param, workload=NODES_WORKLOAD) as devnet:
        yield devnet


@pytest.fixture
def real_node(node_devnet: Devnet) -> Devnet:
    """The session's node devnet with default gateway settings."""
    assert node_devnet.gateway is not None
    node_devnet.gateway.configure(GatewaySettings())
    return node_devnet
