"""A real Hardhat 2 node (EDR engine) from the pinned npm package, configured like the devnet's anvil: the same chain
id, genesis time, gas limit and test-mnemonic accounts. Hardhat 2, not 3: Hardhat 3 needs Node 22.

Hardhat reads its settings only from a config file, so each node writes a one-line ``hardhat.config.js`` into a
temporary folder of its own and removes it when it stops.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from chainframe.devnet._anvil import AnvilOptions
from chainframe.devnet._contracts import EvmVersion
from chainframe.devnet._errors import DevnetError
from chainframe.devnet._node_rpc import NodeRPC
from chainframe.devnet._npm import find_in_node_modules, free_port, node_binary
from chainframe.devnet._process import Child
from chainframe.devnet._running import RunningNode

HARDHAT_VERSION = "2.29.1"
TEST_MNEMONIC = "test test test test test test test test test test test junk"
"""anvil's, Hardhat's and (given it) Ganache's dev-account mnemonic: the same ten accounts on every node."""
_HINT = f"run scripts/setup (it installs hardhat@{HARDHAT_VERSION} into ./node_modules), or set CHAINFRAME_HARDHAT"
_STARTED = re.compile(r"JSON-RPC server at (http://[0-9.]+:\d+)")


def hardhat_config(options: AnvilOptions) -> str:
    """The ``hardhat.config.js`` for ``options`` (Hardhat's own default hardfork, Prague in 2.29)."""
    network = {
        "chainId": options.chain_id,
        "initialDate": datetime.fromtimestamp(options.genesis_timestamp, UTC).isoformat(),
        "blockGasLimit": options.gas_limit or 30_000_000,
        "accounts": {"mnemonic": TEST_MNEMONIC, "count": options.accounts},
        "mining": {"auto": options.auto_mine, "interval": 0},
    }
    return f"module.exports = {json.dumps({'networks': {'hardhat': network}})};\n"


class HardhatNode(RunningNode):
    """A running ``hardhat node``. Use as a context manager, or call :meth:`stop`."""

    name = "hardhat"
    evm: EvmVersion = "cancun"
    set_code = True
    """Whether the node takes EIP-7702 (type-4) transactions."""

    def __init__(self, options: AnvilOptions = AnvilOptions()) -> None:
        if options.load_state is not None or options.dump_state is not None:
            raise DevnetError("a Hardhat node cannot load or dump anvil's state; build the workload on it instead")
        self.options = options
        cli = find_in_node_modules(Path("hardhat/internal/cli/bootstrap.js"), env="CHAINFRAME_HARDHAT", hint=_HINT)
        self._folder = Path(tempfile.mkdtemp(prefix="chainframe-hardhat-"))
        (self._folder / "hardhat.config.js").write_text(hardhat_config(options))
        env = {**os.environ, "HARDHAT_DISABLE_TELEMETRY_PROMPT": "true"}
        for attempt in range(3):  # the free port may be taken before Hardhat binds it
            port = free_port()
            argv = [node_binary(), str(cli), "--config", str(self._folder / "hardhat.config.js"), "node",
                    "--hostname", "127.0.0.1", "--port", str(port)]  # fmt: skip

            def started(line: str) -> str | None:
                m = _STARTED.search(line)
                return m.group(1) if m else None

            try:
                # Run from the folder holding node_modules: Hardhat refuses to run as a "non-local installation".
                self._child = Child(f"hardhat (chain {options.chain_id})", argv, ready=started, env=env, timeout=60,
                                    cwd=cli.parents[4])  # fmt: skip
                break
            except DevnetError as exc:
                if attempt == 2 or "EADDRINUSE" not in str(exc):
                    shutil.rmtree(self._folder, ignore_errors=True)
                    raise
        self.url = self._child.ready_value
        self.rpc = NodeRPC(self.url)

    def mine(self, timestamp: int) -> None:
        """Mine the pending transactions into one block with this timestamp."""
        self.rpc.call("evm_mine", timestamp)

    def automine(self, on: bool) -> None:
        self.rpc.call("evm_setAutomine", on)

    def stop(self, grace: float = 10.0) -> None:
        super().stop(grace)
        shutil.rmtree(self._folder, ignore_errors=True)
