"""The embedded default: a real anvil holding the deterministic workload chain, behind our Infura-style gateway."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType

from chainframe.devnet._anvil import AnvilNode, AnvilOptions
from chainframe.devnet._chain import ensure_chain
from chainframe.devnet._workload import TEST_WORKLOAD, GroundTruth, WorkloadSpec
from chainframe.devnet.gateway import GatewayConfig, GatewayProcess, GatewaySettings

DEVNET_NETWORK = "devnet"


class Devnet:
    """Start everything on construction; :meth:`stop` (or leaving the ``with`` block) stops everything.

    - ``workload``: the chain to serve (built once and cached, see ``cache_dir``).
    - ``extra_networks``: name -> chain id of further, empty anvil nodes behind the same gateway; the Host header's
      first label picks the network (``sepolia.localhost``), anything else gets the ``devnet`` chain.
    - ``key``: the API key to accept (a random one when None); ``settings``: the gateway's limits and faults.
    """

    def __init__(
        self,
        *,
        workload: WorkloadSpec = TEST_WORKLOAD,
        key: str | None = None,
        settings: GatewaySettings | None = None,
        extra_networks: Mapping[str, int] | None = None,
        cache_dir: Path | None = None,
        port: int = 0,
    ) -> None:
        self.key = key or secrets.token_hex(16)
        self.nodes: dict[str, AnvilNode] = {}
        self.gateway: GatewayProcess | None = None
        try:
            chain = ensure_chain(workload, cache_dir)
            self.truth: GroundTruth = chain.truth
            self.nodes[DEVNET_NETWORK] = AnvilNode(
                AnvilOptions(
                    chain_id=workload.chain_id,
                    genesis_timestamp=workload.genesis_timestamp,
                    load_state=chain.state,
                    gas_limit=workload.gas_limit,
                )
            )
            for name, chain_id in (extra_networks or {}).items():
                self.nodes[name] = AnvilNode(AnvilOptions(chain_id=chain_id))
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
    def node(self) -> AnvilNode:
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
