"""What every devnet node process shares: its JSON-RPC client and child process, its pid, and how it stops."""

from __future__ import annotations

from types import TracebackType
from typing import Self

from chainframe.devnet._node_rpc import NodeRPC
from chainframe.devnet._process import Child


class RunningNode:
    """A node the devnet started (anvil, Hardhat or Ganache); subclasses start it and set ``_child`` and ``rpc``."""

    _child: Child
    rpc: NodeRPC

    @property
    def pid(self) -> int:
        return self._child.pid

    def stop(self, grace: float = 10.0) -> None:
        """Stop the node (SIGTERM, so it can write what it keeps; SIGKILL after ``grace`` seconds)."""
        self.rpc.close()
        self._child.stop(grace)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
