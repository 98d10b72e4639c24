"""Ethereum: L1 mainnet and its testnets, the chains whose blocks are Ethereum's shape, and any chain the table does
not know (read as Ethereum, said to be assumed).

Linea (59144, Linea Sepolia 59141) is declared here, not as a family of its own: a zkEVM rollup whose blocks are
Ethereum's shape (Ethereum's transaction types and receipts, encoded as Ethereum encodes them, the block hash keccak
of Ethereum's header list, Prague's fields included). Its extra data holds the sequencer's fee parameters (a version
byte, fixed cost, variable cost and ETH gas price: linea-sdk-core's ``parseBlockExtraData``), and under Clique its
seal; the hash covers it as any extra data. It has no transaction type, receipt field or header field of its own, so
nothing is Linea's to declare; its L1 messages arrive as ordinary calls of its message service contract. One
recorded Linea mainnet header was checked by hand (block 32,236,935: keccak of its 21 Prague fields is its hash), but
the repository holding it could not be named, so it is not vendored and no test reads a Linea block.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from chainframe.families._family import ChainFamily


class Ethereum(ChainFamily):
    name = "ethereum"
    doc = "Ethereum's own rules: transaction types 0-4, receipts and headers as the execution specs encode them."
    chain_ids: ClassVar[Mapping[int, str]] = {
        1: "Ethereum", 11155111: "Sepolia", 17000: "Holesky", 560048: "Hoodi", 59144: "Linea", 59141: "Linea Sepolia",
    }  # fmt: skip


ETHEREUM = Ethereum()

UNDECLARED: Mapping[int, str] = {
    324: "zkSync Era's block hash is not keccak of an Ethereum header, and it adds its own transaction types (0x71, "
    "0xff)",
    300: "zkSync Sepolia's block hash is not keccak of an Ethereum header, and it adds its own transaction types",
    1329: "Sei is an EVM on a Cosmos chain: its block hash is the Tendermint block's",
    1328: "Sei Testnet is an EVM on a Cosmos chain: its block hash is the Tendermint block's",
    11297108109: "Palm runs Besu with IBFT 2.0, whose block hash leaves the validators' seals in the extra data out",
    11297108099: "Palm Testnet runs Besu with IBFT 2.0, whose block hash leaves the validators' seals out",
    143: "Monad's blocks were not checked against Ethereum's encodings (no recorded block was found)",
    10143: "Monad Testnet's blocks were not checked against Ethereum's encodings (no recorded block was found)",
}
"""Chains a ``--network`` names that no family declares and that are not known to be Ethereum's shape, with why:
read as Ethereum (assumed, as an unknown chain is), and the run's summary says why its proofs may not hold."""
