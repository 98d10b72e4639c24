"""One extraction per process, so peak memory is the tool's own: ``python runners.py TOOL DATASET URL START END OUT``.

Prints one JSON line: ``{"rows": N, "peak_rss_mb": M, "work_seconds": S, "cpu_seconds": C}`` (or
``{"error": "..."}``), where S is the wall time after the tool's imports and C the CPU time (user + sys) of the whole
process, imports included: steadier than wall time on a shared machine. The peers' runners import only the peers,
so this file also runs in the peers' virtualenv (cryo, web3.py, pandas), apart from the project's pins. Block ranges
here are inclusive (START..END).
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

WORK_STARTED = [0.0]
"""When the tool's imports were done: wall time after it is the extraction itself (as in a warm notebook)."""


def _imported() -> None:
    WORK_STARTED[0] = time.perf_counter()


def _inputs() -> dict[str, Any]:
    """What the dataset reads besides blocks, by chainframe's names (``addresses``, ``tokens``, ``storage_keys``,
    ``calls``): ``BENCH_INPUTS``, a JSON object (compare.inputs); none for the datasets that take none."""
    return dict(json.loads(os.environ.get("BENCH_INPUTS") or "{}"))


def cryo_inputs(dataset: str, given: dict[str, Any]) -> dict[str, list[str]]:
    """The same inputs by cryo's names, which name a role in the request rather than a kind of input: ``address`` is
    the account read (the token itself for erc20_supplies and erc20_metadata), ``contract`` the contract called (the
    token for erc20_balances, whose ``address`` is the holder), ``slot`` a storage key, ``call_data`` the input."""
    out: dict[str, list[str]] = {}
    if "tokens" in given:
        out["contract" if dataset == "erc20_balances" else "address"] = given["tokens"]
    if "addresses" in given:
        out["address"] = given["addresses"]
    if "storage_keys" in given:
        out["slot"] = given["storage_keys"]
    if "calls" in given:
        # cryo calls every contract with every call data: the calls given must be that cross product.
        calls = given["calls"]
        out["contract"] = list(dict.fromkeys(c["to"] for c in calls))
        out["call_data"] = list(dict.fromkeys(c["data"] for c in calls))
        assert len(out["contract"]) * len(out["call_data"]) == len(calls), "cryo's eth_calls cross contracts and data"
    return out


def run_chainframe(dataset: str, url: str, start: int, end: int, out: str) -> int:
    from chainframe import extract
    from chainframe.rpc import Pacing

    _imported()

    credits = float(os.environ.get("BENCH_CREDITS_PER_SECOND", "0")) or None
    options: dict[str, Any] = {"pacing": Pacing(credits_per_second=credits, max_concurrency=16)}
    report = extract(
        dataset, blocks=f"{start}:{end}", rpc=url, out=out, overwrite=True, progress=False, concurrency=4,
        chunk_size=int(os.environ.get("BENCH_CHUNK_SIZE", "1000")), client_options=options, **_inputs(),
    )  # fmt: skip
    return int(report.datasets[dataset]["rows"])


def run_cryo(dataset: str, url: str, start: int, end: int, out: str) -> int:
    import cryo
    import pyarrow.parquet as pq

    _imported()

    # cryo's ranges exclude their end.
    cryo.freeze(
        dataset, blocks=[f"{start}:{end + 1}"], rpc=url, output_dir=out, chunk_size=1000, no_verbose=True,
        overwrite=True, **cryo_inputs(dataset, _inputs()),
    )  # fmt: skip
    return sum(pq.read_metadata(p).num_rows for p in Path(out).glob("*.parquet"))


def run_web3(dataset: str, url: str, start: int, end: int, out: str) -> int:
    """How many researchers export logs today: get_logs in 1,000-block steps, into pandas, then Parquet."""
    import pandas as pd
    from web3 import Web3

    _imported()

    assert dataset == "logs", "the web3.py baseline is for logs"
    w3 = Web3(Web3.HTTPProvider(url, request_kwargs={"timeout": 120}))
    rows: list[dict[str, Any]] = []
    for first in range(start, end + 1, 1000):
        for log in w3.eth.get_logs({"fromBlock": first, "toBlock": min(first + 999, end)}):
            rows.append(
                {
                    "block_number": log["blockNumber"],
                    "block_hash": log["blockHash"].hex(),
                    "transaction_index": log["transactionIndex"],
                    "transaction_hash": log["transactionHash"].hex(),
                    "log_index": log["logIndex"],
                    "address": log["address"],
                    "topics": [t.hex() for t in log["topics"]],
                    "data": log["data"].hex(),
                }
            )
    frame = pd.DataFrame(rows)
    Path(out).mkdir(parents=True, exist_ok=True)
    frame.to_parquet(Path(out) / "logs.parquet")
    return len(frame)


def run_raw(dataset: str, url: str, start: int, end: int, out: str) -> int:
    """The floor: the same JSON-RPC calls with the best batching and concurrency found, bytes discarded.

    Best found against anvil on the benchmark chain (2026-11-23, interleaved rounds, least wall time): anvil's CPU per
    answer byte grows with the answer, so small answers win locally. eth_getLogs over 8 blocks (about 1,250 logs,
    0.7 MB): 0.52 s, against 0.62 s for 16 blocks and 0.81 s for 60 (5.5 MB answers, the floor before); receipts in
    batches of 5 blocks (0.55 MB): 0.82 s, 0.88 s in 10, 0.94 s in 20 (the floor before). 8 connections: 4 and 16
    made no difference beyond the noise."""
    from urllib.parse import urlsplit

    _imported()
    batch = {"blocks": 50, "transactions": 50, "receipts": 5}.get(dataset, 1)
    logs_span = int(os.environ.get("BENCH_LOGS_SPAN", "8"))

    def calls() -> list[list[dict[str, Any]] | dict[str, Any]]:
        if dataset == "logs":
            return [
                {"jsonrpc": "2.0", "id": i, "method": "eth_getLogs",
                 "params": [{"fromBlock": hex(a), "toBlock": hex(min(a + logs_span - 1, end))}]}
                for i, a in enumerate(range(start, end + 1, logs_span))
            ]  # fmt: skip
        method, extra = {
            "blocks": ("eth_getBlockByNumber", [False]),
            "transactions": ("eth_getBlockByNumber", [True]),
            "receipts": ("eth_getBlockReceipts", []),
        }[dataset]
        numbers = list(range(start, end + 1))
        return [
            [{"jsonrpc": "2.0", "id": n, "method": method, "params": [hex(n), *extra]} for n in numbers[i : i + batch]]
            for i in range(0, len(numbers), batch)
        ]

    async def main() -> int:
        # Plain asyncio streams, keep-alive, 8 connections: the cheapest receive found (httpx costs twice the CPU).
        parts = urlsplit(url)
        pool: asyncio.Queue[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = asyncio.Queue()
        for _ in range(8):
            pool.put_nowait(await asyncio.open_connection(parts.hostname, parts.port or 80, limit=2**20))
        head = f"POST {parts.path or '/'} HTTP/1.1\r\nhost: {parts.netloc}\r\ncontent-type: application/json\r\n"
        received = 0

        async def one(body: Any) -> None:
            nonlocal received
            data = json.dumps(body).encode()
            for _ in range(100):  # a rate limit (remote mode) is waited out: the floor keeps to the budget too
                reader, writer = await pool.get()
                writer.write(f"{head}content-length: {len(data)}\r\n\r\n".encode() + data)
                lines = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").lower().split("\r\n")
                fields = dict(line.split(":", 1) for line in lines[1:] if ":" in line)
                if "content-length" in fields:
                    answer = await reader.readexactly(int(fields["content-length"]))
                else:  # chunked
                    chunks = []
                    while size := int((await reader.readuntil(b"\r\n")).split(b";")[0], 16):
                        chunks.append(await reader.readexactly(size))
                        await reader.readexactly(2)
                    await reader.readuntil(b"\r\n")
                    answer = b"".join(chunks)
                pool.put_nowait((reader, writer))
                if " 429 " in lines[0] + " ":
                    await asyncio.sleep(float(fields.get("retry-after", "0.2")))
                    continue
                if " 200 " not in lines[0] + " " or b'"error"' in answer[:200]:
                    raise RuntimeError(f"{lines[0]}: {answer[:200].decode()}")
                received += len(answer)
                return
            raise RuntimeError("still rate limited after 100 tries")

        await asyncio.gather(*(one(c) for c in calls()))
        while not pool.empty():
            pool.get_nowait()[1].close()
        return received

    asyncio.run(main())
    return -1  # rows are not counted: the bytes are discarded


RUNNERS = {"chainframe": run_chainframe, "cryo": run_cryo, "web3": run_web3, "raw": run_raw}

if __name__ == "__main__":
    tool, dataset, url, start, end, out = sys.argv[1:7]
    try:
        rows = RUNNERS[tool](dataset, url, int(start), int(end), out)
        work = time.perf_counter() - WORK_STARTED[0]
        # Peak resident memory of this process (and anything it waited for), in MB.
        # ru_maxrss of this process counts its parent's pages at the fork, before the exec: VmHWM (Linux) does not.
        status = Path("/proc/self/status").read_text().splitlines()
        self_kb = next((int(line.split()[1]) for line in status if line.startswith("VmHWM:")), None)
        own = self_kb if self_kb is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        peak = max(own, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
        usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
        cpu = sum(u.ru_utime + u.ru_stime for u in usage)
        print(json.dumps({"rows": rows, "peak_rss_mb": round(peak / 1024, 1), "work_seconds": round(work, 3),
                          "cpu_seconds": round(cpu, 3)}))  # fmt: skip
    except Exception as exc:  # reported, not raised: a tool that fails is a result
        print(json.dumps({"error": f"{type(exc).__name__}: {str(exc)[:300]}"}))
        sys.exit(1)
