"""Differential fuzz of the native scanner against the pure path, at scale: ``scripts/bench fuzz_native``.

The default test run holds 2,500 seeded cases of recorded answers (tests/datasets/test_native.py); this runs as many
as asked, on the devnet's own answers (eth_getLogs over a few blocks, blocks with and without their transactions,
block receipts) and the recorded ones, damaged as ``tests/datasets/fuzz.py`` damages them. Every case is decoded with
the scanner and with ``CHAINFRAME_NATIVE=0``; the outcomes are counted per dataset. Cases where the scanner took what
the pure path refused, gave another table, or where either path raised an error that is not a DecodeError, are
written to ``--save`` (default: none) and make the exit code 1.

Run: ``scripts/bench fuzz_native --cases 20000 [--seed N] [--save DIR]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import anyio
from tests.datasets import fuzz

from chainframe.datasets import BLOCKS, LOGS, RECEIPTS, TRANSACTIONS, BlockRange
from chainframe.datasets._objects import ObjectDataset
from chainframe.devnet import Devnet
from chainframe.rpc import AsyncClient

SPAN = 4  # blocks per answer: answers of a few to a few hundred kB, as small pieces of a real run are


def _devnet_answers() -> list[tuple[ObjectDataset, bytes]]:
    """Answers from the devnet, a piece of ``SPAN`` blocks each."""
    with Devnet() as devnet:
        head = devnet.truth.head

        async def main() -> list[tuple[ObjectDataset, bytes]]:
            out: list[tuple[ObjectDataset, bytes]] = []
            async with AsyncClient(devnet.node.url, batch_size=SPAN) as client:
                for start in range(0, head + 1, SPAN):
                    blocks = BlockRange(start, min(start + SPAN - 1, head))
                    for dataset in (LOGS, BLOCKS, TRANSACTIONS, RECEIPTS):
                        out += [(dataset, body) for body in await dataset.fetch(client, blocks)]
            return out

        return anyio.run(main)


def _recorded_answers() -> list[tuple[ObjectDataset, bytes]]:
    from tests.datasets.test_native import CASES

    return [(dataset, body) for _, dataset, body in CASES if len(body) < 200_000]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=20_000, help="damaged answers to decode both ways")
    parser.add_argument("--seed", type=int, default=26)
    parser.add_argument("--save", type=Path, help="a folder for the cases that went wrong")
    args = parser.parse_args(argv)
    print("starting the devnet and fetching answers...", flush=True)
    devnet = _devnet_answers()
    recorded = _recorded_answers()
    print(f"{len(devnet)} devnet answers ({sum(len(b) for _, b in devnet) / 1e6:.1f} MB), {len(recorded)} recorded")
    wrong = 0
    for name, originals in (("devnet", devnet), ("recorded", recorded)):
        started = time.perf_counter()
        cases = args.cases * len(originals) // (len(devnet) + len(recorded)) or 1
        report = fuzz.run(originals, cases, seed=args.seed)
        print(f"\n{name}: {cases:,} cases in {time.perf_counter() - started:.1f} s")
        for dataset in sorted(report.by_dataset):
            print(f"  {dataset:<13}{report.by_dataset[dataset].total():>7,}  {report.summary(dataset)}")
        print(f"  {'all':<13}{report.counts.total():>7,}  {report.summary()}")
        wrong += report.wrong_count
        if args.save is not None:
            args.save.mkdir(parents=True, exist_ok=True)
            for i, (dataset_name, u256, body) in enumerate(report.wrong):
                (args.save / f"{name}-{i}-{dataset_name}-{u256}.json").write_bytes(body)
    print(f"\nwrong: {wrong or 'none'} (the scanner took what the pure path refused, gave another table, or a path")
    print("raised an error that is not a DecodeError)")
    sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
