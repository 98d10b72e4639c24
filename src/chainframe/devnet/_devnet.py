"""The embedded default: a real node holding the deterministic workload chain, behind our Infura-style gateway.

anvil loads the chain from a cached state dump; Hardhat and Ganache cannot read anvil's dump, so the workload is built
on them at each start (the small ``NODES_WORKLOAD`` takes seconds)."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from types import TracebackType

from chainframe.devnet._anvil import AnvilOptions
from chainframe.devnet._chain import ensure_chain
from chainframe.devnet._node import Node, NodeName, start_node
from chainframe.devnet._workload import TEST_WORKLOAD, GroundTruth, WorkloadSpec, build_chain
from chainframe.devnet.gateway import GatewayConfig, GatewayProcess, GatewaySettings

DEVNET_NETWORK = "devnet"


class Devnet:
    """Start everything on construction; :meth:`stop` (or leaving the ``with`` block) stops everything.

    - ``node``: which node serves it: ``anvil`` (the default), ``hardhat`` or ``ganache``, each a real process from
      its pinned npm package.
    - ``workload``: the chain to serve (on anvil built once and cached, see ``cache_dir``; on the others built at
      each start).
    - ``extra_networks``: name -> chain id of further, empty nodes of the same kind behind the same gateway; the Host
      header's first label picks the network (``sepolia.localhost``), anything else gets the ``devnet`` chain.
    - ``key``: the API key to accept (a random one when None); ``settings``: the gateway's limits and faults.
    """

    def __init__(
        self,
        *,
        node: NodeName = "anvil",
        workload: WorkloadSpec = TEST_WORKLOAD,
        key: str | None = None,
        settings: GatewaySettings | None = None,
        extra_networks: Mapping[str, int] | None = None,
        cache_dir: Path | None = None,
        port: int = 0,
    ) -> None:
        self.key = key or secrets.token_hex(16)
        self.node_name: NodeName = node
        self.nodes: dict[str, Node] = {}
        self.gateway: GatewayProcess | None = None
        try:
            options = AnvilOptions(
                chain_id=workload.chain_id,
                genesis_timestamp=workload.genesis_timestamp,
                gas_limit=workload.gas_limit,
                network=workload.network,
            )
            if node == "anvil":
                chain = ensure_chain(workload, cache_dir)
                self.truth: GroundTruth = chain.truth
                self.nodes[DEVNET_NETWORK] = start_node(node, replace(options, load_state=chain.state))
            else:
                self.nodes[DEVNET_NETWORK] = built = start_node(node, replace(options, auto_mine=False))
                self.truth = build_chain(workload, built)
                built.automine(True)
            for name, chain_id in (extra_networks or {}).items():
                self.nodes[name] = start_node(node, AnvilOptions(chain_id=chain_id))
            self.gateway = GatewayProcess(
                GatewayConfig(
                    networks={name: node.url for name, node in self.nodes.items()},
                    default_network=DEVNET_NETWORK,
                    keys=(self.key,),
                    admin_token=secrets.token_hex(16),
                    settings=settings or GatewaySettings(),
                    port=port,
                )
            )
        except BaseException:
            self.stop()
            raise

    @property
    def node(self) -> Node:
        """The node serving the workload chain (for tests that need to bypass the gateway)."""
        return self.nodes[DEVNET_NETWORK]

    @property
    def http_url(self) -> str:
        assert self.gateway is not None
        return self.gateway.http_url(self.key)

    @property
    def ws_url(self) -> str:
        assert self.gateway is not None
        return self.gateway.ws_url(self.key)

    def stop(self) -> None:
        if self.gateway is not None:
            self.gateway.stop()
        for node in self.nodes.values():
            node.stop()

    def __enter__(self) -> Devnet:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
