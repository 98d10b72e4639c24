"""Child processes that cannot outlive us.

The devnet starts real processes (anvil, the gateway). A test run that is killed, or a user's Ctrl-C, must not leave
them behind: each child asks the kernel for SIGTERM when its parent dies (``PR_SET_PDEATHSIG``), and :class:`Child`
stops it explicitly (SIGTERM, then SIGKILL) on the normal path.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO

from chainframe.devnet._errors import DevnetError

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    # Own process group: a terminal's Ctrl-C reaches only us, and we stop children in order.
    os.setpgid(0, 0)


class Child:
    """A started child process whose stdout is read line by line until it says it is ready.

    ``ready`` is called on each output line and returns a value once the child is ready (the line that says so);
    the output is kept (a bounded tail) for error messages.
    """

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        *,
        ready: Callable[[str], str | None],
        stdin_text: str | None = None,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        timeout: float = 30.0,
    ) -> None:
        self.name = name
        self._tail: list[str] = []
        self._drain: threading.Thread | None = None
        self._proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE if stdin_text is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
            cwd=cwd,
            preexec_fn=_die_with_parent,  # for PR_SET_PDEATHSIG; it runs before exec, no threads involved
        )
        if stdin_text is not None:
            assert self._proc.stdin is not None
            self._proc.stdin.write(stdin_text)
            self._proc.stdin.close()
        assert self._proc.stdout is not None
        self.ready_value = self._wait_ready(self._proc.stdout, ready, timeout)
        # Keep draining output so the child never blocks on a full pipe.
        drain = threading.Thread(target=self._drain_output, args=(self._proc.stdout,), daemon=True)
        drain.start()
        self._drain = drain

    @property
    def pid(self) -> int:
        return self._proc.pid

    def _remember(self, line: str) -> None:
        self._tail.append(line.rstrip("\n"))
        del self._tail[:-40]

    def _wait_ready(self, out: IO[str], ready: Callable[[str], str | None], timeout: float) -> str:
        deadline = time.monotonic() + timeout
        result: list[str] = []

        def reader() -> None:
            for line in out:
                self._remember(line)
                value = ready(line)
                if value is not None:
                    result.append(value)
                    return

        t = threading.Thread(target=reader, daemon=True)
        t.start()
        t.join(max(0.0, deadline - time.monotonic()))
        if result:
            return result[0]
        if t.is_alive():
            reason = f"was not ready within {timeout:.0f} s"
        else:  # its output ended before it was ready: it is exiting (read its code before stop() ends it)
            try:
                reason = f"exited with code {self._proc.wait(timeout=5)}"
            except subprocess.TimeoutExpired:
                reason = "closed its output before it was ready"
        self.stop()
        tail = "\n".join(self._tail[-15:])
        raise DevnetError(f"{self.name} {reason}; its last output:\n{tail}")

    def _drain_output(self, out: IO[str]) -> None:
        try:
            for line in out:
                self._remember(line)
        except ValueError:  # closed by stop() while a grandchild still held the pipe
            pass

    def alive(self) -> bool:
        return self._proc.poll() is None

    def output_tail(self) -> str:
        return "\n".join(self._tail)

    def stop(self, grace: float = 5.0) -> None:
        """Stop the child: SIGTERM, then SIGKILL after ``grace`` seconds. Idempotent."""
        if self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(grace)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        if self._drain is not None:
            self._drain.join(5.0)  # output ends once the child is gone
        if self._proc.stdout is not None:
            self._proc.stdout.close()
