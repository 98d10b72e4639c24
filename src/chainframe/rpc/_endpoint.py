"""Where requests go: a base URL plus a key, named Infura networks, and any full URL.

The key lives only inside the :class:`Endpoint`; its ``repr``, ``str`` and :attr:`Endpoint.display` show the URL with
the key replaced by ``<redacted>``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from chainframe._errors import InputError
from chainframe._redact import redact_text, redact_url, url_secrets

KEY_ENV = "INFURA_API_KEY"

# Infura network -> host label (https://<label>.infura.io/v3/<KEY>); from Infura's endpoint docs
# (docs/research/providers.md).
INFURA_NETWORKS: dict[str, str] = {
    name: name
    for name in (
        "mainnet", "sepolia", "hoodi",
        "arbitrum-mainnet", "arbitrum-sepolia", "avalanche-mainnet", "avalanche-fuji",
        "base-mainnet", "base-sepolia", "blast-mainnet", "blast-sepolia", "bsc-mainnet", "bsc-testnet",
        "celo-mainnet", "celo-sepolia", "linea-mainnet", "linea-sepolia", "mantle-mainnet", "mantle-sepolia",
        "monad-mainnet", "monad-testnet", "opbnb-mainnet", "opbnb-testnet", "optimism-mainnet", "optimism-sepolia",
        "palm-mainnet", "palm-testnet", "polygon-mainnet", "polygon-amoy", "scroll-mainnet", "scroll-sepolia",
        "sei-mainnet", "sei-testnet", "starknet-mainnet", "starknet-sepolia", "swellchain-mainnet",
        "swellchain-testnet", "unichain-mainnet", "unichain-sepolia", "zksync-mainnet", "zksync-sepolia",
        "hemi-mainnet", "hemi-testnet",
    )
}  # fmt: skip
# Networks whose WebSocket endpoint Infura documents.
INFURA_WEBSOCKET = frozenset(
    {
        "mainnet", "sepolia", "hoodi", "arbitrum-mainnet", "arbitrum-sepolia", "avalanche-mainnet", "avalanche-fuji",
        "base-mainnet", "base-sepolia", "blast-mainnet", "bsc-mainnet", "linea-mainnet", "linea-sepolia",
        "mantle-mainnet", "opbnb-mainnet", "optimism-mainnet", "optimism-sepolia", "polygon-mainnet", "polygon-amoy",
        "zksync-mainnet",
    }
)  # fmt: skip


@dataclass(frozen=True)
class Endpoint:
    """An HTTP URL and, where the service has one, a WebSocket URL; both may carry the key in their path."""

    http_url: str = field(repr=False)
    ws_url: str | None = field(default=None, repr=False)
    key: str = field(default="", repr=False)
    network: str | None = None
    host_header: str | None = None
    """Sent as the Host header; lets one gateway address serve several networks (``sepolia.localhost``)."""

    @classmethod
    def infura(cls, network: str, key: str | None = None) -> Endpoint:
        """Infura's endpoint for a named network; the key comes from ``key`` or ``$INFURA_API_KEY``."""
        if network not in INFURA_NETWORKS:
            known = ", ".join(sorted(INFURA_NETWORKS))
            raise InputError(f"network {network!r} is not an Infura network; use one of: {known}; or pass --rpc URL")
        key = key or os.environ.get(KEY_ENV, "")
        if not key:
            raise InputError(f"no API key for {network}: pass key=... or set the {KEY_ENV} environment variable")
        host = f"{INFURA_NETWORKS[network]}.infura.io"
        ws = f"wss://{host}/ws/v3/{key}" if network in INFURA_WEBSOCKET else None
        return cls(http_url=f"https://{host}/v3/{key}", ws_url=ws, key=key, network=network)

    @classmethod
    def from_url(cls, url: str, *, ws_url: str | None = None, network: str | None = None) -> Endpoint:
        """Any full URL (self-hosted node, other provider). An Infura-style ``/v3/<KEY>`` path gets a WS twin."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https", "ws", "wss") or not parts.netloc:
            raise InputError(f"RPC URL must look like https://host/path, got {redact_url(url)!r}")
        found = url_secrets(url)  # a key in the path (/v3/, /v2/, a token), the query or the user info
        key = found[0] if found else ""
        if parts.scheme in ("ws", "wss"):
            return cls(http_url=url.replace("ws", "http", 1).replace("/ws/v3/", "/v3/"), ws_url=url, key=key)
        if ws_url is None and "/v3/" in parts.path and "/ws/" not in parts.path:
            ws_scheme = "wss" if parts.scheme == "https" else "ws"
            ws_url = f"{ws_scheme}://{parts.netloc}{parts.path.replace('/v3/', '/ws/v3/', 1)}"
        return cls(http_url=url, ws_url=ws_url, key=key, network=network)

    @property
    def secrets(self) -> list[str]:
        """Every secret the endpoint's URLs carry (and its key): what is redacted wherever it turns up."""
        found = [self.key, *url_secrets(self.http_url), *(url_secrets(self.ws_url) if self.ws_url else [])]
        return [s for s in dict.fromkeys(found) if s]

    @property
    def display(self) -> str:
        """The HTTP URL with the key redacted: safe for logs, errors and file metadata."""
        return redact_text(self.http_url, *self.secrets)

    def redact(self, text: str) -> str:
        return redact_text(text, *self.secrets)

    def __str__(self) -> str:
        return self.display

    def __repr__(self) -> str:
        return f"Endpoint({self.display!r}, network={self.network!r})"
