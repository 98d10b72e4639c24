"""The subcommands of ``chainframe``: each one's name, the module that builds and runs it, and its one-line help.

The one place the list is kept, so the command line can name every subcommand (``chainframe --help``) while it loads
only the module of the one it runs: ``--version`` and ``--help`` load none (no pyarrow, no engine), and ``extract``
loads neither the verifier's nor the devnet's command. Each module's ``add_parser`` takes its help from here.
"""

from __future__ import annotations

COMMANDS: dict[str, tuple[str, str]] = {
    "extract": ("_extract", "extract datasets over a block range into Parquet files"),
    "abi": ("_abi", "say which ABI an address decodes with, and why (its own, or a proxy's implementation's)"),
    "call": ("_call", "call one JSON-RPC method and print the result as JSON"),
    "probe": ("_probe", "ask a node what it serves and which datasets will work on it"),
    "info": ("_info", "show what an output folder holds: datasets, block ranges, rows, gaps, problems"),
    "repair": ("_repair", "rewrite stored chunks that a reorganization took off the chain"),
    "vacuum": ("_vacuum", "delete chunk files that later commits replaced (Delta tables), and leftover temporaries"),
    "verify": ("_verify", "prove stored rows against the stored block headers (offline) or the node's (--rpc)"),
    "datasets": ("_schema", "list the datasets, one line each"),
    "schema": ("_schema", "show a dataset's columns, types and descriptions, and how it is fetched"),
    "devnet": (
        "_devnet",
        "run a local devnet (anvil, Hardhat or Ganache) behind an Infura-compatible gateway until Ctrl-C",
    ),
    "demo": ("_demo", "extract the local devnet's whole chain to Parquet and query it"),
}
"""Name -> (module in ``chainframe.cli``, one-line help), in the order ``--help`` lists them."""


def help_of(name: str) -> str:
    """The one-line help of the subcommand ``name``."""
    return COMMANDS[name][1]
