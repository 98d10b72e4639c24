"""The devnet node: a real anvil process from the pinned npm package, on a free loopback port."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from chainframe.devnet._contracts import EvmVersion
from chainframe.devnet._errors import DevnetError
from chainframe.devnet._node_rpc import NodeRPC
from chainframe.devnet._process import Child
from chainframe.devnet._running import RunningNode

ANVIL_NPM_PACKAGE = "@foundry-rs/anvil-linux-amd64"
ANVIL_VERSION = "1.7.1"
_INSTALL_HINT = (
    f"run scripts/setup (it installs {ANVIL_NPM_PACKAGE}@{ANVIL_VERSION} into ./node_modules with `npm ci`), "
    "or set CHAINFRAME_ANVIL to an anvil binary"
)
AnvilNetwork = Literal["ethereum", "optimism"]
"""The chain rules anvil runs (its ``--network``)."""
LOAD_BYTES_PER_S = 5e6
"""The slowest rate at which anvil reads a saved chain that its start waits for (the 60 s for the rest come on top)."""

_LISTENING = re.compile(r"Listening on ([0-9.]+):(\d+)")


def find_anvil() -> Path:
    """Locate the anvil binary: ``$CHAINFRAME_ANVIL``, else ``node_modules`` above the working dir or this package."""
    explicit = os.environ.get("CHAINFRAME_ANVIL")
    if explicit:
        path = Path(explicit)
        if not path.is_file():
            raise DevnetError(f"CHAINFRAME_ANVIL points at {path}, which is not a file; {_INSTALL_HINT}")
        return path
    relative = Path("node_modules", *ANVIL_NPM_PACKAGE.split("/"), "bin", "anvil")
    for start in (Path.cwd(), Path(__file__).resolve()):
        for folder in (start, *start.parents):
            candidate = folder / relative
            if candidate.is_file():
                return candidate
    raise DevnetError(f"anvil was not found; {_INSTALL_HINT}")


@dataclass(frozen=True, kw_only=True)
class AnvilOptions:
    """How to start one anvil node."""

    chain_id: int = 31337
    """EIP-155 chain id the node reports and signs with."""
    genesis_timestamp: int = 1_700_000_000
    """Fixed genesis time, so that block hashes of a rebuilt chain are the same every time."""
    accounts: int = 10
    """Unlocked dev accounts (from anvil's well-known test mnemonic)."""
    auto_mine: bool = True
    """Mine each transaction at once; the workload builder turns this off to fill blocks itself."""
    load_state: Path | None = None
    """Start from a state dump (blocks, transactions, receipts and historical states)."""
    gas_limit: int | None = None
    """Block gas limit; anvil's default (30M) when None."""
    dump_state: Path | None = None
    """Write the whole chain, historical states included, to this file when the node stops."""
    historical_states: bool = True
    """Keep every block's state, also through a dump and a reload, as an archive node does. False: after a reload
    only the latest state is there, and older state is answered with ``BlockOutOfRangeError``, as a full node that
    pruned it."""
    network: AnvilNetwork = "ethereum"
    """``optimism``: OP Stack's rules (``--network optimism``). The node then takes deposits (type 0x7e: an
    ``eth_sendTransaction`` with ``sourceHash``, ``mint`` and ``isSystemTx``, from any address, unsigned) and answers
    with OP's deposit fields. Give it an OP chain id (10) for the chain family to follow from the chain id."""


class AnvilNode(RunningNode):
    """A running anvil. Use as a context manager, or call :meth:`stop`."""

    name = "anvil"
    evm: EvmVersion = "cancun"
    set_code = True
    """Whether the node takes EIP-7702 (type-4) transactions."""

    def __init__(self, options: AnvilOptions = AnvilOptions()) -> None:
        self.options = options
        argv = [
            str(find_anvil()),
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--chain-id",
            str(options.chain_id),
            "--timestamp",
            str(options.genesis_timestamp),
            "--accounts",
            str(options.accounts),
        ]
        if options.historical_states:  # eth_getProof and debug_traceCall answer at old blocks, also after a reload
            argv.append("--preserve-historical-states")
        if not options.auto_mine:
            argv.append("--no-mining")
        if options.load_state is not None:
            argv += ["--load-state", str(options.load_state)]
        if options.dump_state is not None:
            argv += ["--dump-state", str(options.dump_state)]
        if options.gas_limit is not None:
            argv += ["--gas-limit", str(options.gas_limit)]
        if options.network != "ethereum":
            argv += ["--network", options.network]

        def listening(line: str) -> str | None:
            m = _LISTENING.search(line)
            return f"http://{m.group(1)}:{m.group(2)}" if m else None

        # A saved chain is read whole before anvil listens: the benchmark's 870 MB took it over 60 s at load 14.
        loading = options.load_state.stat().st_size / LOAD_BYTES_PER_S if options.load_state is not None else 0.0
        name = f"anvil ({options.network}, chain {options.chain_id})"
        self._child = Child(name, argv, ready=listening, timeout=60 + loading)
        self.url = self._child.ready_value
        self.rpc = NodeRPC(self.url)

    def mine(self, timestamp: int) -> None:
        """Mine the pending transactions into one block with this timestamp."""
        self.rpc.call("evm_mine", {"timestamp": timestamp})

    def automine(self, on: bool) -> None:
        self.rpc.call("evm_setAutomine", on)
