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
from urllib.parse import parse_qsl, unquote, urlsplit

REDACTED = "<redacted>"

# A path segment right after /v3/, /ws/v3/ or /v2/ is a key, whatever it looks like.
_KEY_AFTER_VERSION = re.compile(r"(/(?:ws/)?v[23]/)(?!<redacted>)[^/?#\s\"']+")
# A long random-looking path segment (24+ letters, digits, - or _, with a digit and a letter) is a token, in any text.
_TOKEN_SEGMENT = re.compile(r"(?<=/)(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9_-]{24,}(?=[/?#\s\"']|$)")
# A query parameter whose name says it holds a credential (dRPC's dkey, api_key, access_token, x-api-key, ...).
_SECRET_NAME = re.compile(r"key|token|secret|auth|pass|signature|credential", re.IGNORECASE)
_QUERY_SECRET = re.compile(r"([?&][^=&#\s\"']*(?:key|token|secret|auth|pass|signature|credential)[^=&#\s\"']*=)"
                           r"[^&#\s\"']+", re.IGNORECASE)  # fmt: skip
_USERINFO = re.compile(r"(\b[a-z][a-z0-9+.-]*://)([^/@\s\"']+)@")
# The shape of a credential, wherever in an http(s)/ws(s) URL's path or query it sits: 8+ letters, digits and
# -_.~+/= with a digit and a letter (hex, base58, base64url, UUIDs, ULIDs). Network and chain names have no digit
# (``network=ethereum``, ``/base-mainnet``) and stay readable; short values (``chain=1``, ``/v1``) too.
_CREDENTIAL = re.compile(r"(?=[^/]*\d)(?=[^/]*[A-Za-z])[A-Za-z0-9_.~+/=-]{8,}")
# Providers whose key sits in the path: host suffix -> path segments before it. Anything from there on (10+
# characters: every documented key is longer, and ``/mainnet``, ``/public`` stay readable) is the key.
_KEY_PATH_AT: dict[str, int] = {
    "infura.io": 1, "alchemy.com": 1, "quiknode.pro": 0, "rpc.ankr.com": 1, "p2pify.com": 0, "chainstack.com": 0,
    "drpc.org": 1, "blastapi.io": 0, "getblock.io": 0, "tenderly.co": 0, "blockpi.network": 2, "llamarpc.com": 1,
    "grove.city": 1, "nodereal.io": 1, "onfinality.io": 0, "nownodes.io": 0,
}  # fmt: skip
_URL = re.compile(r"\b(?:https?|wss?)://[^\s\"'<>()\[\]{},;|`]+", re.IGNORECASE)
_LIBRARY_LOGGERS = ("httpx", "httpcore", "websockets", "websockets.client", "aiohttp.client")


def _looks_secret(value: str) -> bool:
    return _CREDENTIAL.fullmatch(value) is not None


def _one_url(url: str) -> tuple[str, list[str]]:
    """One http(s)/ws(s) URL with every credential-shaped part redacted, and those parts."""
    tail = len(url) - len(url.rstrip(".:!?"))  # a sentence's punctuation after a URL is not part of it
    body, punctuation = (url[:-tail], url[-tail:]) if tail else (url, "")
    try:
        parts = urlsplit(body)
    except ValueError:
        return url, []
    host = (parts.hostname or "").lower()
    keep_segments = next((n for suffix, n in _KEY_PATH_AT.items() if host == suffix or host.endswith("." + suffix)),
                         None)  # fmt: skip
    found: list[str] = []
    segments = parts.path.split("/")
    for i, segment in enumerate(segments):
        if not segment:
            continue
        named_key = keep_segments is not None and i > keep_segments and len(segment) >= 10
        version_key = i >= 2 and re.fullmatch(r"v[23]", segments[i - 1]) is not None
        if named_key or version_key or _looks_secret(segment):
            found.append(segment)
            segments[i] = REDACTED
    pairs = []
    for pair in parts.query.split("&") if parts.query else []:
        name, eq, value = pair.partition("=")
        if value and (_SECRET_NAME.search(name) or _looks_secret(value)):
            found.append(unquote(value))
            found.append(value)
            value = REDACTED
        pairs.append(f"{name}{eq}{value}")
    netloc = parts.netloc
    if "@" in netloc:
        user, _, where = netloc.rpartition("@")
        name, colon, password = user.partition(":")
        found += [unquote(password)] if colon else [unquote(name)]
        netloc = f"{name}:{REDACTED}@{where}" if colon else f"{REDACTED}@{where}"
    fragment = f"#{parts.fragment}" if parts.fragment else ""
    query = f"?{'&'.join(pairs)}" if parts.query else ""
    redacted = f"{parts.scheme}://{netloc}{'/'.join(segments)}{query}{fragment}{punctuation}"
    return redacted, [s for s in found if s and s != REDACTED]


def url_secrets(url: str) -> list[str]:
    """The secrets a URL carries, in any of the forms above (to redact them wherever else they turn up)."""
    parts = urlsplit(url)
    found: list[str] = []
    if parts.password:
        found.append(parts.password)
    elif parts.username:
        found.append(parts.username)
    found += [value for name, value in parse_qsl(parts.query) if _SECRET_NAME.search(name) and value]
    found += [m.group(0)[len(m.group(1)) :] for m in _KEY_AFTER_VERSION.finditer(parts.path)]
    found += _TOKEN_SEGMENT.findall(parts.path)
    if parts.scheme.lower() in ("http", "https", "ws", "wss"):
        found += _one_url(url)[1]
    return [s for s in dict.fromkeys(found) if s]


def redact_url(url: str) -> str:
    """Return ``url`` (or any text holding URLs) with every key form above replaced by ``<redacted>``: by where it
    sits (a provider's key path, a parameter's name, the user info) and by its shape."""
    url = _URL.sub(lambda match: _one_url(match.group(0))[0], url)
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
