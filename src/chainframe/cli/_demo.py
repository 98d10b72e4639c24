"""``chainframe demo``: the main job on the embedded default devnet, end to end."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import httpx

from chainframe._redact import redact_url
from chainframe.devnet import Devnet


def add_parser(commands: Any) -> None:
    p: argparse.ArgumentParser = commands.add_parser(
        "demo",
        help="start the local devnet and show what chainframe does with it",
        description="Start the local devnet (anvil behind the Infura-compatible gateway) and query it.",
    )
    p.add_argument("--out", type=Path, default=Path("data"), help="output folder (default: ./data)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    print("starting the local devnet (the first start builds and caches the workload chain)...")
    with Devnet() as devnet:
        truth = devnet.truth
        print(f"HTTP endpoint:      {redact_url(devnet.http_url)}")
        print(f"WebSocket endpoint: {redact_url(devnet.ws_url)}")
        print(f"chain: id {truth.chain_id}, blocks 0..{truth.head}, {truth.tx_count} txs, {truth.log_count} logs")
        request = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "eth_getBlockByNumber",
            "params": [hex(truth.head), False],
        }
        answer = httpx.post(devnet.http_url, json=request).json()
        block = answer["result"]
        sample = {k: block[k] for k in ("number", "hash", "timestamp", "gasUsed", "baseFeePerGas")}
        sample["transactions"] = f"[{len(block['transactions'])} hashes]"
        print(f"sample answer to eth_getBlockByNumber({hex(truth.head)}):")
        print(json.dumps(sample, indent=2))
    return 0
