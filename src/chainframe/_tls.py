"""One TLS context per process for the HTTP clients chainframe makes.

httpx makes a new ``ssl.SSLContext`` for every client it is given no context for, loading certifi's CA bundle each
time: 25-40 ms of CPU per client on this machine kind. A run makes one client per endpoint, the devnet one per node,
gateway and admin connection, and the test suite thousands (py-spy put about a minute of its samples in
``ssl.create_default_context``). A context is safe to share between clients and threads, so each client is given this
one. It is httpx's own default, made the same way (``SSL_CERT_FILE`` and ``SSL_CERT_DIR`` honoured), once per value of
those two variables.
"""

from __future__ import annotations

import functools
import os
import ssl

import httpx


def verified_context() -> ssl.SSLContext:
    """httpx's default context (certificates verified against certifi's bundle, or ``SSL_CERT_FILE`` or
    ``SSL_CERT_DIR``), made once per process for each value of those variables."""
    return _context_for(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@functools.cache
def _context_for(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    del cert_file, cert_dir  # the cache's key: httpx reads the variables itself
    return httpx.create_ssl_context()
