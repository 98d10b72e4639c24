"""One devnet a module for tests that mine and reorganize its chain, each handed the chain as built.

A new devnet (anvil loading the workload's chain, and the gateway's process) cost 2-6 s of wall each; a module's tests
that change the chain share one instead: anvil takes the chain back to a snapshot (``evm_snapshot`` before a test,
``evm_revert`` after it). A test that reorganized blocks down to the snapshot's head leaves anvil without the snapshot
(it refuses the revert, and then answers no latest block): the devnet is stopped and the next test gets a new one.
Used by tests/engine/test_living.py and the S3 and Delta files (tests/store/test_s3.py's ``chain`` fixture).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from chainframe.devnet import Devnet, DevnetError, GatewaySettings
from chainframe.devnet._node_rpc import NodeRPC


class ModuleDevnet:
    """A module's devnet: :meth:`take` before a test (default gateway settings, stats reset, a snapshot of the
    chain), :meth:`give_back` after it (the chain as it was, or a new devnet for the next test)."""

    def __init__(self) -> None:
        self.devnet: Devnet | None = None
        self.snapshot = ""
        self.head: dict[str, Any] = {}

    def take(self) -> Devnet:
        if self.devnet is None:
            self.devnet = Devnet()
        assert self.devnet.gateway is not None
        self.devnet.gateway.configure(GatewaySettings())
        self.devnet.gateway.reset_stats()
        with node_rpc(self.devnet) as rpc:
            self.head = rpc.call("eth_getBlockByNumber", "latest", False)
            self.snapshot = rpc.call("evm_snapshot")
        return self.devnet

    def give_back(self) -> None:
        if self.devnet is None:
            return
        with node_rpc(self.devnet) as rpc:
            try:
                rpc.call("evm_revert", self.snapshot)
                back = rpc.call("eth_getBlockByNumber", "latest", False) == self.head
            except DevnetError:
                back = False
        if not back:
            self.stop()

    def stop(self) -> None:
        if self.devnet is not None:
            self.devnet.stop()
            self.devnet = None


@contextmanager
def node_rpc(devnet: Devnet) -> Iterator[NodeRPC]:
    """The devnet's node, straight (not through the gateway)."""
    rpc = NodeRPC(devnet.node.url)
    try:
        yield rpc
    finally:
        rpc.close()


@pytest.fixture(scope="module")
def module_devnet() -> Iterator[ModuleDevnet]:
    """The module's :class:`ModuleDevnet` (import it with ``chain`` and ``node``, which use it)."""
    holder = ModuleDevnet()
    try:
        yield holder
    finally:
        holder.stop()


@pytest.fixture
def chain(module_devnet: ModuleDevnet) -> Iterator[Devnet]:
    """A devnet whose chain is as built, not the session's: the tests mine and reorganize it. The module's tests
    share one while anvil can take the chain back after each; one that reorganized below the workload's head 240
    leaves the next test a new devnet."""
    yield module_devnet.take()
    module_devnet.give_back()


@pytest.fixture
def node(chain: Devnet) -> Iterator[NodeRPC]:
    """The chain's node, straight (for anvil_reorg, anvil_mine, evm_snapshot and evm_revert)."""
    rpc = NodeRPC(chain.node.url)
    yield rpc
    rpc.close()
