"""The ``chainframe`` command.

:func:`main` runs a command line in the caller's process (tests, notebooks, a pipeline's own code); :func:`command` is
the installed ``chainframe`` command's process (and ``python -m chainframe.cli``), which first sets itself up
(:mod:`chainframe.cli._process`). Both load the subcommands only when called: importing this package costs nothing,
so the command can set its process up before anything loads pyarrow.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from chainframe.cli._process import command

if TYPE_CHECKING:
    import argparse


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command line (``sys.argv[1:]`` when None); returns its exit code."""
    from chainframe.cli._main import main as run  # deferred: the subcommands, after the process is set up

    return run(argv)


def build_parser() -> argparse.ArgumentParser:
    """The whole command line's parser (every subcommand)."""
    from chainframe.cli._main import build_parser as build  # deferred: the subcommands

    return build()


__all__ = ["build_parser", "command", "main"]
