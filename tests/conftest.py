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
