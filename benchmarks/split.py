"""The C cut of batch answers (``chainframe.rpc._envelopes.split``): its throughput on ~100 MB of the recorded results
batched as a node sends them, and on a batch of non-ASCII strings (bytes past 0x7f, which it takes without a UTF-8
check, as json takes latin-1 text).

Run: ``scripts/bench split``. Prints the best of 7 per batch; exit code 0 whatever the figures.
"""

from __future__ import annotations

import json
import time

from tests.fixtures import recorded_responses

from chainframe.rpc._split import _envelopes


def _batches() -> dict[str, bytes]:
    results = [r.result for r in recorded_responses() if r.error is None]
    items = [{"jsonrpc": "2.0", "id": i, "result": results[i % len(results)]} for i in range(len(results))]
    one = json.dumps(items, separators=(",", ":")).encode()
    recorded = b"[" + b",".join([one[1:-1]] * max(1, (100 << 20) // len(one))) + b"]"
    text = [{"jsonrpc": "2.0", "id": i, "result": "\u00e9\u4e2d caf\u00e9 " * 200} for i in range(20000)]
    return {"recorded": recorded, "non-ascii": json.dumps(text, ensure_ascii=False).encode()}


def main() -> None:
    if _envelopes is None:
        raise SystemExit("the C extension chainframe.rpc._envelopes is not built")
    for name, body in _batches().items():
        assert _envelopes.split(body) is not None
        times = []
        for _ in range(7):
            start = time.perf_counter()
            _envelopes.split(body)
            times.append(time.perf_counter() - start)
        best = min(times)
        print(
            f"{name:<10} {len(body) / 1e6:6.0f} MB  best of 7 {best * 1e3:7.1f} ms  {len(body) / best / 1e9:5.2f} GB/s"
        )


if __name__ == "__main__":
    main()
