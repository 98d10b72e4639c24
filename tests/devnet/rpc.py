"""Raw JSON-RPC helpers for devnet tests: they look at the wire, below any chainframe client."""

from __future__ import annotations

import json
from typing import Any

import httpx
from websockets.sync.client import connect

from chainframe._tls import verified_context


def call(method: str, *params: Any, id: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "method": method, "params": list(params)}


def post(url: str, body: Any, **kwargs: Any) -> httpx.Response:
    return httpx.post(url, json=body, timeout=60, verify=verified_context(), **kwargs)  # see chainframe._tls


def result(url: str, method: str, *params: Any) -> Any:
    answer = post(url, call(method, *params)).json()
    assert "error" not in answer, answer
    return answer["result"]


def ws_exchange(url: str, body: Any) -> Any:
    with connect(url, max_size=None) as ws:
        ws.send(json.dumps(body))
        return json.loads(ws.recv(timeout=60))
