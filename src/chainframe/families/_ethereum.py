"""Ethereum: L1 mainnet and its testnets, the chains whose blocks are Ethereum's shape, and any chain the table does
not know (read as Ethereum, said to be assumed).

Linea (59144, Linea Sepolia 59141) is declared here, not as a family of its own: a zkEVM rollup whose blocks are
Ethereum's shape (transaction types 0-2 as Ethereum encodes them, receipts and header fields as Ethereum's, the block
hash keccak of the header's list; its sequencer's Clique-style seal sits in the extra data, which the hash covers as
any extra data). It has no transaction type, receipt field or header field of its own, so nothing is Linea's to
declare; its L1 messages arrive as ordinary calls of its message service contract. No recorded Linea block was found
in public test data to prove this on (``tests/verify/test_more_networks.py`` says which searches were made).
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
