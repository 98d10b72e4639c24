"""While a command waits on a failing service, say so on stderr: ``retrying (2/6) in 0.5 s: <reason>``.

The client logs each retry with its attempt, the policy's bound, the wait and the error (whose text never holds the
key); this handler prints those records as one line each. Rate limits do not use up attempts (they are waited out
within their own time budget), so they read ``rate limited, waiting ...`` instead.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from chainframe._redact import redact_text
from chainframe.rpc import RateLimited, TransientError


class _RetryLines(logging.Handler):
    def __init__(self, secrets: tuple[str, ...]) -> None:
        super().__init__(logging.INFO)
        self._secrets = secrets

    def emit(self, record: logging.LogRecord) -> None:
        retry = getattr(record, "retry", None)
        if retry is None:
            return
        attempt, attempts, wait, error = retry
        if not isinstance(error, TransientError):  # a refused key is tried once more, quietly (Infura's spurious 401)
            return
        reason = " ".join(str(error).split())
        if isinstance(error, RateLimited):
            line = f"rate limited, waiting {wait:.1f} s: {reason}"
        else:
            line = f"retrying ({min(attempt, attempts)}/{attempts}) in {wait:.1f} s: {reason}"
        print(redact_text(line, *self._secrets), file=sys.stderr, flush=True)


@contextmanager
def retry_lines(*secrets: str) -> Iterator[None]:
    """Print the client's retries on stderr while the block runs (``secrets`` redacted, should any slip in)."""
    logger = logging.getLogger("chainframe.rpc")
    handler = _RetryLines(tuple(s for s in secrets if s))
    level = logger.level
    logger.addHandler(handler)
    if logger.getEffectiveLevel() > logging.INFO:
        logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
