"""Keeping API keys out of everything we print, log, raise or write.

Providers put the key in many places of a URL: the path (Infura ``/v3/<KEY>`` and ``/ws/v3/<KEY>``, Alchemy
``/v2/<KEY>``, QuickNode and others a long token segment), a query parameter (``?apikey=``, ``?key=``, ``?token=``),
or the user-info part (``https://user:<KEY>@host``). :func:`url_secrets` finds them; any URL we show goes through
:func:`redact_url`, free text through :func:`redact_text` (which also removes every literal secret it is given).

Libraries log too: httpx logs every request's URL at INFO. :func:`guard_library_logs` puts a filter on the loggers of
the libraries we send requests with, so their records are redacted before any handler sees them.
"""

from __future__ import annotations

import logging
import re
from urllib.parse import parse_qsl, urlsplit

REDACTED = "<redacted>"

# A path segment right after /v3/, /ws/v3/ or /v2/ is a key, whatever it looks like.
_KEY_AFTER_VERSION = re.compile(r"(/(?:ws/)?v[23]/)[^/?#\s\"']+")
# A long random-looking path segment (24+ letters, digits, - or _, with a digit and a letter) is a token.
_TOKEN_SEGMENT = re.compile(r"(?<=/)(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{24,}(?=[/?#\s\"']|$)")
_SECRET_PARAMS = ("key", "apikey", "api_key", "api-key", "x-api-key", "token", "access_token", "auth", "secret",
                  "password", "projectsecret")  # fmt: skip
_QUERY_SECRET = re.compile(rf"([?&](?:{'|'.join(map(re.escape, _SECRET_PARAMS))})=)[^&#\s\"']+", re.IGNORECASE)
_USERINFO = re.compile(r"(\b[a-z][a-z0-9+.-]*://)([^/@\s\"']+)@")
_LIBRARY_LOGGERS = ("httpx", "httpcore", "websockets", "websockets.client", "aiohttp.client")


def url_secrets(url: str) -> list[str]:
    """The secrets a URL carries, in any of the forms above (to redact them wherever else they turn up)."""
    parts = urlsplit(url)
    found: list[str] = []
    if parts.password:
        found.append(parts.password)
    elif parts.username:
        found.append(parts.username)
    found += [value for name, value in parse_qsl(parts.query) if name.lower() in _SECRET_PARAMS and value]
    found += [m.group(0)[len(m.group(1)) :] for m in _KEY_AFTER_VERSION.finditer(parts.path)]
    found += _TOKEN_SEGMENT.findall(parts.path)
    return [s for s in dict.fromkeys(found) if s]


def redact_url(url: str) -> str:
    """Return ``url`` (or any text holding URLs) with every key form above replaced by ``<redacted>``."""
    url = _KEY_AFTER_VERSION.sub(rf"\g<1>{REDACTED}", url)
    url = _TOKEN_SEGMENT.sub(REDACTED, url)
    url = _QUERY_SECRET.sub(rf"\g<1>{REDACTED}", url)

    def userinfo(match: re.Match[str]) -> str:
        user, _, password = match.group(2).partition(":")
        return f"{match.group(1)}{user}:{REDACTED}@" if password else f"{match.group(1)}{REDACTED}@"

    return _USERINFO.sub(userinfo, url)


def redact_text(text: str, *secrets: str) -> str:
    """Redact key forms of URLs in ``text`` and every literal occurrence of the given secrets."""
    text = redact_url(text)
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    return text


class _RedactingFilter(logging.Filter):
    """Rewrites a record's message with its arguments merged in and every key redacted."""

    def __init__(self) -> None:
        super().__init__("chainframe-redact")
        self.secrets: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = redact_text(message, *self.secrets)
        if redacted != message or record.args:
            record.msg, record.args = redacted, None
        return True


_FILTER = _RedactingFilter()


def guard_library_logs(*secrets: str) -> None:
    """Redact ``secrets`` (and every URL key form) from the records of the libraries we send requests with."""
    _FILTER.secrets.update(s for s in secrets if s)
    for name in _LIBRARY_LOGGERS:
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
