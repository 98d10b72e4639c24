"""The devnet's nodes: anvil, Hardhat or Ganache, each a real process from its pinned npm package, started and
stopped by the same code (:func:`start_node`) and driven through the same few calls (:class:`Node`)."""

from __future__ import annotations

from typing import Literal, Protocol

from chainframe.devnet._anvil import AnvilNode, AnvilOptions
from chainframe.devnet._contracts import EvmVersion
from chainframe.devnet._ganache import GanacheNode
from chainframe.devnet._hardhat import HardhatNode
from chainframe.devnet._node_rpc import NodeRPC

NodeName = Literal["anvil", "hardhat", "ganache"]
NODE_NAMES: tuple[NodeName, ...] = ("anvil", "hardhat", "ganache")
"""The nodes the devnet runs; anvil is the default."""


class Node(Protocol):
    """What the devnet and the workload builder need of a running node."""

    @property
    def name(self) -> str: ...
    @property
    def evm(self) -> EvmVersion:
        """The newest EVM version the node runs: the workload's contracts are compiled for it."""
        ...

    @property
    def set_code(self) -> bool:
        """Whether the node takes EIP-7702 (type-4) transactions."""
        ...

    @property
    def url(self) -> str: ...
    @property
    def rpc(self) -> NodeRPC: ...
    @property
    def pid(self) -> int: ...
    def mine(self, timestamp: int) -> None: ...
    def automine(self, on: bool) -> None: ...
    def stop(self, grace: float = 10.0) -> None: ...


def start_node(name: NodeName, options: AnvilOptions = AnvilOptions()) -> Node:
    """Start the named node with ``options`` and wait until it answers; stop it with ``stop()``."""
    kinds: dict[NodeName, type[AnvilNode | HardhatNode | GanacheNode]] = {
        "anvil": AnvilNode, "hardhat": HardhatNode, "ganache": GanacheNode,
    }  # fmt: skip
    return kinds[name](options)
