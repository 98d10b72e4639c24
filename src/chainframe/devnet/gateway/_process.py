"""Starting a gateway process and steering it through its admin endpoint."""

from __future__ import annotations

import json
import sys
from types import TracebackType
from typing import Any

import httpx

from chainframe._tls import verified_context
from chainframe.devnet._errors import DevnetError
from chainframe.devnet._process import Child
from chainframe.devnet.gateway._config import GatewayConfig, GatewaySettings


def _ready(line: str) -> str | None:
    try:
        event = json.loads(line)
    except ValueError:
        return None
    if isinstance(event, dict) and event.get("event") == "ready":
        return str(event["port"])
    return None


class GatewayProcess:
    """A running gateway. ``http_url(key)`` and ``ws_url(key)`` give the endpoints; the rest steers it."""

    def __init__(self, config: GatewayConfig) -> None:
        self.config = config
        self._child = Child(
            "gateway",
            [sys.executable, "-m", "chainframe.devnet.gateway"],
            ready=_ready,
            stdin_text=json.dumps(config.to_json()),
            timeout=30,
        )
        self.port = int(self._child.ready_value)
        self.base_url = f"http://{config.host}:{self.port}"
        self.ws_base_url = f"ws://{config.host}:{self.port}"
        self._admin = httpx.Client(
            base_url=self.base_url, headers={"X-Admin-Token": config.admin_token}, verify=verified_context()
        )

    @property
    def pid(self) -> int:
        return self._child.pid

    def http_url(self, key: str) -> str:
        return f"{self.base_url}/v3/{key}"

    def ws_url(self, key: str) -> str:
        return f"{self.ws_base_url}/ws/v3/{key}"

    def _admin_call(self, method: str, path: str, body: Any = None) -> Any:
        response = self._admin.request(method, path, json=body)
        if response.status_code != 200:
            raise DevnetError(f"gateway admin {method} {path} refused ({response.status_code}): {response.text}")
        return response.json()

    def configure(self, settings: GatewaySettings) -> None:
        """Replace the running gateway's limits, faults, latency and pacing (and reseed its fault generator)."""
        self._admin_call("PUT", "/_gateway/settings", settings.to_json())

    def settings(self) -> GatewaySettings:
        return GatewaySettings.from_json(self._admin_call("GET", "/_gateway/settings"))

    def stats(self) -> dict[str, Any]:
        """Counters since start or the last reset: requests, calls per method, faults and limit errors."""
        result: dict[str, Any] = self._admin_call("GET", "/_gateway/stats")
        return result

    def reset_stats(self) -> None:
        self._admin_call("POST", "/_gateway/stats/reset")

    def alive(self) -> bool:
        return self._child.alive()

    def stop(self) -> None:
        self._admin.close()
        self._child.stop()

    def __enter__(self) -> GatewayProcess:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
