"""Every wait is bounded: a server that trickles its answer is cut off at the deadline for a whole answer, and an
endless body or a gzip bomb stops at the answer-size cap, with the process's memory bounded by it (measured in a
child process's peak RSS). The servers are real (aiohttp on 127.0.0.1) and stop by themselves."""

from __future__ import annotations

import asyncio
import functools
import subprocess
import sys
import time
import zlib
from collections.abc import Iterator

import anyio
import pytest
from aiohttp import web

from chainframe.rpc import AsyncClient, RetryPolicy, Timeout, TransportError
from tests.threaded_server import serve_in_thread

ONCE = RetryPolicy(attempts=1)
ANSWER = b'{"jsonrpc":"2.0","id":0,"result":"0x1"}'


@functools.cache
def _bomb_body() -> bytes:
    """1 GiB of JSON (``[``, 2**30 spaces, ``]``) in about 1 MB of gzip, made when first served. Compressing the
    gibibyte took 6.6 CPU-s (``gzip.compress``, level 9): here one MiB of spaces is compressed once and its deflate
    block repeated, which a full flush makes independent of what came before (the same bytes each time, checked), and
    the gzip trailer (CRC-32 and length) is written for the whole text: 0.45 CPU-s, a body ``gzip.decompress``
    inflates and checks."""
    spaces, repeats = b" " * (1 << 20), 1 << 10
    deflate = zlib.compressobj(9, zlib.DEFLATED, 31, 9, zlib.Z_RLE)  # wbits 31: gzip's header and trailer
    head = deflate.compress(b"[") + deflate.flush(zlib.Z_FULL_FLUSH)
    block = deflate.compress(spaces) + deflate.flush(zlib.Z_FULL_FLUSH)
    assert deflate.compress(spaces) + deflate.flush(zlib.Z_FULL_FLUSH) == block
    tail = deflate.compress(b"]") + deflate.flush()
    crc = zlib.crc32(b"[")
    for _ in range(repeats):
        crc = zlib.crc32(spaces, crc)
    crc, size = zlib.crc32(b"]", crc), 2 + len(spaces) * repeats
    return head + block * repeats + tail[:-8] + crc.to_bytes(4, "little") + (size % 2**32).to_bytes(4, "little")


async def _trickle(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse(headers={"content-type": "application/json"})
    await response.prepare(request)
    for byte in ANSWER:  # one byte every 0.3 s: no single read ever waits long
        await response.write(bytes([byte]))
        await asyncio.sleep(0.3)
    return response


async def _endless(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse(headers={"content-type": "application/json"})
    await response.prepare(request)
    chunk = b"[" + b"0," * (1 << 19)
    deadline = time.monotonic() + 60  # stops by itself
    while time.monotonic() < deadline:
        await response.write(chunk)
    return response


async def _bomb(request: web.Request) -> web.Response:
    return web.Response(body=_bomb_body(), headers={"content-type": "application/json", "content-encoding": "gzip"})


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    _bomb_body()  # made before any test's client waits for it
    with serve_in_thread([("/trickle", _trickle), ("/endless", _endless), ("/bomb", _bomb)]) as port:
        yield f"http://127.0.0.1:{port}"


def test_a_trickled_answer_is_cut_off_at_the_deadline_for_the_whole_answer(server: str) -> None:
    async def main() -> None:
        async with AsyncClient(f"{server}/trickle", retry=ONCE, timeout=Timeout(read=5, total=2)) as client:
            await client.chain_id()

    started = time.monotonic()
    with pytest.raises(TransportError, match="no complete answer within 2 s"):
        anyio.run(main)
    assert time.monotonic() - started < 4


CHILD = """
import sys, anyio
from chainframe.rpc import AsyncClient, LimitExceeded, RetryPolicy
async def main():
    async with AsyncClient(sys.argv[1], retry=RetryPolicy(attempts=1), max_answer_bytes=64 * 2**20) as client:
        try:
            await client.request_bytes("eth_chainId", [])
        except LimitExceeded as exc:
            print("LimitExceeded:", exc.detail)
anyio.run(main)
peak = [l for l in open("/proc/self/status") if l.startswith("VmHWM")][0].split()[1]
print("peak_kb", peak)
"""


@pytest.mark.parametrize("path", ["/endless", "/bomb"])
def test_an_endless_or_inflating_answer_stops_at_the_cap_with_memory_bounded(server: str, path: str) -> None:
    started = time.monotonic()
    child = subprocess.run([sys.executable, "-c", CHILD, f"{server}{path}"], capture_output=True, text=True,
                           timeout=120)  # fmt: skip
    assert child.returncode == 0, child.stderr
    lines = dict(line.split(" ", 1) for line in child.stdout.strip().splitlines())
    assert "larger than 67,108,864 bytes" in lines["LimitExceeded:"]
    assert ("inflated" if path == "/bomb" else "received") in lines["LimitExceeded:"]
    peak_mb = int(lines["peak_kb"]) / 1024
    print(f"{path}: peak RSS {peak_mb:.0f} MB")
    assert peak_mb < 400, peak_mb  # the cap is 64 MB; the interpreter and its libraries take about 150 MB
    assert time.monotonic() - started < 60
