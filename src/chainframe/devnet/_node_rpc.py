"""A minimal synchronous JSON-RPC caller for talking to our own anvil while building a chain.

This is deliberately not chainframe's client: the devnet is what the client is tested against, so it must not depend
on it. It speaks to the node directly (no key, no gateway) and treats every error as a bug in the workload.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx

from chainframe._tls import verified_context
from chainframe.devnet._errors import DevnetError

Call = tuple[str, Sequence[Any]]


class NodeRPC:
    def __init__(self, url: str, *, timeout: float = 120.0) -> None:
        self.url = url
        self._http = httpx.Client(timeout=timeout, verify=verified_context())
        self._next_id = 0

    def close(self) -> None:
        self._http.close()

    def call(self, method: str, *params: Any) -> Any:
        return self.batch([(method, params)])[0]

    def batch(self, calls: Sequence[Call]) -> list[Any]:
        """Send ``calls`` as one JSON-RPC batch; return the results in call order or raise on any error."""
        if not calls:
            return []
        first = self._next_id
        self._next_id += len(calls)
        body = [
            {"jsonrpc": "2.0", "id": first + i, "method": method, "params": list(params)}
            for i, (method, params) in enumerate(calls)
        ]
        response = self._http.post(self.url, json=body if len(body) > 1 else body[0])
        response.raise_for_status()
        answers = response.json()
        if isinstance(answers, dict):
            answers = [answers]
        by_id = {a["id"]: a for a in answers}
        results = []
        for i, (method, _params) in enumerate(calls):
            answer = by_id.get(first + i)
            if answer is None:
                raise DevnetError(f"node gave no answer to {method}")
            if "error" in answer:
                raise DevnetError(f"node refused {method}: {answer['error']}")
            results.append(answer["result"])
        return results
