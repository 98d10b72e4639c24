"""The ``chainframe`` command. One module per subcommand; this one only wires them to argparse."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from chainframe._errors import ChainframeError, InputError
from chainframe._version import __version__
from chainframe.cli import _call, _demo, _devnet, _extract, _info, _verify


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="chainframe",
        description="Turn an EVM chain's JSON-RPC service into typed, query-ready Parquet datasets.",
    )
    parser.add_argument("--version", action="version", version=f"chainframe {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module in (_extract, _call, _info, _verify, _devnet, _demo):
        module.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code: int = args.run(args)
    except KeyboardInterrupt:
        print("\ninterrupted; everything started was stopped", file=sys.stderr)
        return 130
    except InputError as exc:  # nothing was sent: say what to fix
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except ChainframeError as exc:  # from the service or the files; messages never hold the key
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return code


if __name__ == "__main__":
    sys.exit(main())
