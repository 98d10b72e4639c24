"""Keeping API keys out of everything we print, log, raise or write.

A key travels inside the URL path (``/v3/<KEY>``, ``/ws/v3/<KEY>``), so any URL we show goes through
:func:`redact_url`; free text that might quote a URL or a key goes through :func:`redact_text`.
"""

from __future__ import annotations

import re

REDACTED = "<redacted>"

# The path segment after /v3/ or /ws/v3/ is the key, whatever it looks like.
_KEY_IN_PATH = re.compile(r"(/(?:ws/)?v3/)[^/?#\s\"']+")


def redact_url(url: str) -> str:
    """Return ``url`` with the key segment of an Infura-style path replaced by ``<redacted>``."""
    return _KEY_IN_PATH.sub(rf"\g<1>{REDACTED}", url)


def redact_text(text: str, *secrets: str) -> str:
    """Redact key segments of URLs in ``text`` and every literal occurrence of the given secrets."""
    text = redact_url(text)
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    return text
