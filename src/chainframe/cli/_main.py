"""The command line: one module per subcommand; this one wires them to argparse and turns expected failures into one
line and an exit code."""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import re
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

from chainframe._errors import ChainframeError, InputError
from chainframe._redact import url_secrets
from chainframe._version import __version__
from chainframe.cli._commands import COMMANDS


class _Parser(argparse.ArgumentParser):
    """Refuses a command line in one line and a pointer to ``--help``, not the whole usage first."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {message}\nsee '{self.prog} --help'\n")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser: every subcommand whole, or (``only``) that one whole and the others by their name
    and help alone, so that a command loads its own module only (``only=""``: none, for ``--version`` and ``--help``).
    """
    parser = _Parser(
        prog="chainframe",
        description="Turn an EVM chain's JSON-RPC service into typed, query-ready Parquet datasets.",
    )
    parser.add_argument("--version", action="version", version=f"chainframe {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    chosen = COMMANDS[only][0] if only else None
    for name, (module, help) in COMMANDS.items():
        if name in commands.choices:  # a module that builds two subcommands (datasets and schema)
            continue
        if only is None or module == chosen:
            importlib.import_module(f"chainframe.cli.{module}").add_parser(commands)
        else:
            commands.add_parser(name, help=help, add_help=False).add_argument("rest", nargs=argparse.REMAINDER)
    return parser


def _command_named(argv: Sequence[str]) -> str:
    """The subcommand a command line names (its first word that is not an option; the top level's options take no
    value), or "" when it names none that exists."""
    first = next((arg for arg in argv if not arg.startswith("-")), "")
    return first if first in COMMANDS else ""


def _ctrl_c_twice_stops_at_once() -> None:
    """The first Ctrl-C cancels the run (every chunk file whole or absent); a second one exits at once."""
    presses = 0

    def handler(signum: int, frame: object) -> None:
        nonlocal presses
        presses += 1
        if presses > 1:
            os.write(2, b"\ninterrupted again: stopped at once (the next run cleans up)\n")
            os._exit(130)
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, handler)


_RANGE = re.compile(r"^-?[\d:][\w.:+/,-]*$|^(earliest|latest|safe|finalized):[\w.:+/,-]*$|.*\.parquet(:\w+)?$")


def _attached_values(argv: Sequence[str]) -> list[str]:
    """``--blocks -1000:`` as printed (argparse would read a value starting with '-' as an option), and several
    ranges after one ``--blocks`` / ``-b`` as cryo takes them (``-b 0:10 20:30``): one value, spaces between."""
    out: list[str] = []
    gathering = False
    for arg in argv:
        if out and out[-1] in ("--blocks", "-b") and (_RANGE.match(arg) or not arg.startswith("-")):
            out[-1] = f"--blocks={arg}"
            gathering = True
        elif gathering and not arg.startswith("--") and _RANGE.match(arg):
            out[-1] += f" {arg}"
        else:
            out.append(arg)
            gathering = False
    return out


def main(argv: Sequence[str] | None = None) -> int:
    argv = _attached_values(sys.argv[1:] if argv is None else argv)
    args = build_parser(_command_named(argv)).parse_args(argv)
    previous = signal.getsignal(signal.SIGINT)
    # Only where Ctrl-C is Python's own (not ignored by a parent, not someone else's handler), and put back after.
    ours = threading.current_thread() is threading.main_thread() and previous is signal.default_int_handler
    if ours:
        _ctrl_c_twice_stops_at_once()
    try:
        return _run(args)
    finally:
        if ours and argv is not None:  # called in-process (not as the command): leave Ctrl-C as it was
            signal.signal(signal.SIGINT, previous)


def _run(args: argparse.Namespace) -> int:
    try:
        # A command that asks no node (datasets, schema) says so: it then loads no RPC client.
        code: int = _with_node(args) if getattr(args, "asks_node", True) else args.run(args)
    except KeyboardInterrupt:
        print("\ninterrupted; everything started was stopped", file=sys.stderr)
        return 130
    except InputError as exc:  # nothing was sent: say what to fix
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except ChainframeError as exc:  # from the service or the files; messages never hold the key
        print(f"error: {_one_line(exc)}", file=sys.stderr)
        return 1
    except OSError as exc:  # the output folder or the disk: no traceback for what the user can fix
        print(f"error: {_disk_error(exc, getattr(args, 'out', None))}", file=sys.stderr)
        return 1
    return code


def _with_node(args: argparse.Namespace) -> int:
    """Run the command with its endpoint options resolved, the client's retries said on stderr."""
    # Here, not at the top: both load the RPC client (asyncio, httpx's types: 0.1 s of start-up), which --version,
    # --help and the commands that ask no node never need.
    from chainframe.cli._endpoint import resolve_endpoint_options
    from chainframe.cli._retries import retry_lines  # deferred: the RPC client, as above

    resolve_endpoint_options(args)
    rpc = getattr(args, "rpc", None)
    with retry_lines(*(url_secrets(rpc) if isinstance(rpc, str) else ())):
        code: int = args.run(args)
    return code


def _disk_error(error: OSError, out: object) -> str:
    """An OS error in words; a full disk names the file being written and its folder, and what to do."""
    if error.errno == errno.ENOSPC:
        if error.filename:
            file = Path(str(error.filename))
            return (
                f"no space left on device writing {file.name} in {file.parent}: free space there or use another --out"
            )
        return f"no space left on device writing into {out}: free space there or use another --out"
    return f"{error.strerror or error}" + (f" ({error.filename})" if error.filename else "")


def _one_line(error: BaseException) -> str:
    notes = " ".join(getattr(error, "__notes__", ()))
    return " ".join(f"{error} {notes}".split())


if __name__ == "__main__":
    sys.exit(main())
