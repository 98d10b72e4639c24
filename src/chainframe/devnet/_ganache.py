"""A real Ganache 7 node from the pinned npm package, configured like the devnet's anvil: the same chain id, genesis
time, gas limit and test-mnemonic accounts. It runs Shanghai (no Cancun opcodes, no type-3 or type-4 transactions),
so the workload deploys the contracts compiled for Shanghai and leaves out its EIP-7702 transaction.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

from chainframe.devnet._anvil import AnvilOptions
from chainframe.devnet._contracts import EvmVersion
from chainframe.devnet._errors import DevnetError
from chainframe.devnet._hardhat import TEST_MNEMONIC
from chainframe.devnet._node_rpc import NodeRPC
from chainframe.devnet._npm import find_in_node_modules, free_port, node_binary
from chainframe.devnet._process import Child
from chainframe.devnet._running import RunningNode

GANACHE_VERSION = "7.9.2"
_HINT = f"run scripts/setup (it installs ganache@{GANACHE_VERSION} into ./node_modules), or set CHAINFRAME_GANACHE"
_LISTENING = re.compile(r"RPC Listening on ([0-9.]+):(\d+)")


class GanacheNode(RunningNode):
    """A running ``ganache``. Use as a context manager, or call :meth:`stop`."""

    name = "ganache"
    evm: EvmVersion = "shanghai"
    set_code = False
    """Whether the node takes EIP-7702 (type-4) transactions."""

    def __init__(self, options: AnvilOptions = AnvilOptions()) -> None:
        if options.load_state is not None or options.dump_state is not None:
            raise DevnetError("a Ganache node cannot load or dump anvil's state; build the workload on it instead")
        self.options = options
        cli = find_in_node_modules(Path("ganache/dist/node/cli.js"), env="CHAINFRAME_GANACHE", hint=_HINT)
        genesis = datetime.fromtimestamp(options.genesis_timestamp, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        for attempt in range(3):  # the free port may be taken before Ganache binds it
            argv = [node_binary(), str(cli), "--server.host", "127.0.0.1", "--server.port", str(free_port()),
                    "--chain.chainId", str(options.chain_id), "--chain.time", genesis,
                    "--wallet.mnemonic", TEST_MNEMONIC, "--wallet.totalAccounts", str(options.accounts),
                    "--miner.blockGasLimit", str(options.gas_limit or 30_000_000)]  # fmt: skip

            def listening(line: str) -> str | None:
                m = _LISTENING.search(line)
                return f"http://{m.group(1)}:{m.group(2)}" if m else None

            try:
                self._child = Child(f"ganache (chain {options.chain_id})", argv, ready=listening, timeout=60)
                break
            except DevnetError as exc:
                if attempt == 2 or "EADDRINUSE" not in str(exc):
                    raise
        self.url = self._child.ready_value
        self.rpc = NodeRPC(self.url)
        if not options.auto_mine:
            self.automine(False)

    def mine(self, timestamp: int) -> None:
        """Mine the pending transactions into one block with this timestamp (also while mining is stopped)."""
        self.rpc.call("evm_mine", {"timestamp": timestamp})

    def automine(self, on: bool) -> None:
        self.rpc.call("miner_start" if on else "miner_stop")
