"""Decoded events: from raw logs to typed, lossless columns (one per event parameter), and the token-transfer
tables researchers start with."""

from chainframe.events._abi import Event, Param, events_of, keccak, parse_signature, topic0
from chainframe.events._decode import decode_events
from chainframe.events._transfers import ERC20_TRANSFER, ERC721_TRANSFER, erc20_transfers, erc721_transfers

__all__ = [
    "ERC20_TRANSFER",
    "ERC721_TRANSFER",
    "Event",
    "Param",
    "decode_events",
    "erc20_transfers",
    "erc721_transfers",
    "events_of",
    "keccak",
    "parse_signature",
    "topic0",
]
