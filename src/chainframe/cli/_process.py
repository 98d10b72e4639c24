"""The ``chainframe`` command's own process: set up before anything heavy loads, and left without a teardown.

What a library must not do to its caller's process, the command does to its own, each measured on
``scripts/bench compare``'s blocks (2,000 blocks from a local anvil, 12 interleaved rounds, this 2-core machine):

- **No OpenBLAS threads.** numpy, which pyarrow imports, starts an OpenBLAS thread per core that spins for about
  0.1 CPU-s after start-up; this process does no linear algebra (0.47 to 0.38 CPU-s). A caller's setting is kept.
- **pyarrow without numpy, where the command line cannot need it.** pyarrow imports numpy only to exchange arrays
  with it (and runs without it: numpy is optional to pyarrow); numpy's import is about 60 ms of a blocks extraction's
  0.37 s. An extraction of plain datasets with plain options (:func:`numpy_free`) runs with numpy unavailable to the
  whole process, so that code which would need it fails at once with an ImportError, never against a pyarrow that
  was loaded without numpy. Anything else (decoding, verification, Dask, other subcommands) loads numpy as before.
- **No interpreter teardown.** Once the command has returned, every file it wrote is committed and closed, and every
  thread it started has ended. Python's exit would then free every module and object one by one (about 30 ms); the
  command runs the exit handlers, flushes its output and leaves (:func:`leave`).
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from collections.abc import Sequence
from typing import NoReturn

from chainframe.datasets import _inputs  # the declared inputs: plain Python, no dataset (nor pyarrow) is imported
from chainframe.datasets._registry import REGISTRY  # the catalogue's lines, likewise

_INPUT_FLAGS = frozenset(
    flag
    for given in vars(_inputs).values()
    if isinstance(given, _inputs.Input) and given.parse != "own"  # topics and --event may decode signatures
    for flag in (given.flag, *given.also)
)
PLAIN_OPTIONS = frozenset({
    "--blocks", "--rpc", "--rpc-env", "--rpc-file", "--network", "--out", "--chunk-size", "--concurrency",
    "--overwrite", "--align", "--follow", "--poll", "--u256", "--confirmations", "--report", "--no-progress",
    "--requests-per-second", "--credits-per-second", "--max-in-flight", "--transport", *_INPUT_FLAGS,
})  # fmt: skip
"""``extract`` options that decode, verify and distribute nothing (an abbreviated option is not among them): the
run's own, and the datasets' declared inputs (whether a dataset itself needs numpy, its catalogue line says)."""


def numpy_free(argv: Sequence[str]) -> bool:
    """Whether a command line is an extraction that cannot need numpy: ``extract``, plain datasets, plain options.

    Unsure is no: a value that happens to be another dataset's name, or an option given abbreviated, loads numpy."""
    if not argv or argv[0] != "extract":
        return False
    for arg in argv[1:]:
        if arg.startswith("--") and arg.split("=", 1)[0] not in PLAIN_OPTIONS:
            return False
        if arg in REGISTRY and not REGISTRY[arg].numpy_free:  # as each dataset's catalogue line says
            return False
    return True


def prepare(argv: Sequence[str]) -> None:
    """Set the process up for this command line, before anything loads numpy or pyarrow."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if numpy_free(argv) and "numpy" not in sys.modules and "pyarrow" not in sys.modules:
        sys.modules["numpy"] = None  # type: ignore[assignment]  # import numpy now raises ImportError


def command() -> NoReturn:
    """The ``chainframe`` command: ``chainframe.cli.main`` on ``sys.argv``, in a process set up for it."""
    prepare(sys.argv[1:])
    from chainframe.cli._main import main  # deferred: the subcommands, once prepare() has set the process up

    leave(main())


def leave(code: int) -> NoReturn:
    """Exit with ``code`` as Python would (exit handlers run, output flushed), without freeing modules one by one.

    Where a thread other than a daemon is still alive, Python's own exit waits for it: so does this."""
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        sys.exit(code)
    atexit._run_exitfuncs()  # logging's flush among them
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (`chainframe ... | head`): Python exits with 120 then
            code = code or 120
    os._exit(code)
