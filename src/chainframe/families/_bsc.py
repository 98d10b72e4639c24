"""BNB Smart Chain (Parlia): every block, transaction and receipt encoded as Ethereum's, so proven as Ethereum's are.

What Parlia changes is what the same fields hold, not how they are hashed (all of it proven on recorded BSC testnet
blocks after Maxwell, ``tests/verify/test_more_networks.py``):

- The header is Ethereum's field list, Prague's included: ``withdrawalsRoot`` the empty list's root,
  ``parentBeaconBlockRoot`` zero, ``requestsHash`` the empty requests' hash. Its extra data holds the validator's
  vanity, on an epoch's first block the validator set, the BLS vote attestation, and the 65-byte seal; the block hash
  covers all of it. Since Lorentz the mix hash holds the milliseconds of the block's time (nodes answer the sum as
  ``milliTimestamp``, which no column stores).
- System transactions (the validator paying the block's fees to the ValidatorSet contract ``0x...1000``, slashing,
  ...) are ordinary signed legacy transactions with gas price 0, from the block's miner: in the transactions root, and
  their sender proven by their signature like any other.
- Blob transactions (type 3) carry their versioned hashes; the blobs travel beside the block, as on Ethereum.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from chainframe.families._family import ChainFamily


class BnbSmartChain(ChainFamily):
    name = "bsc"
    doc = "BNB Smart Chain (Parlia): Ethereum's encodings; system transactions are signed, gas price 0."
    chain_ids: ClassVar[Mapping[int, str]] = {56: "BNB Smart Chain", 97: "BNB Smart Chain Testnet"}


BSC = BnbSmartChain()
