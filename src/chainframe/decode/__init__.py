"""Decoding event logs into typed columns: signatures and ABIs, keccak, and the token-transfer frames."""

from chainframe._keccak import keccak256
from chainframe.decode._abi import AbiType, Event, Param, as_events, events_from_abi, parse_event, split_top
from chainframe.decode._binary import binary, unhex0x
from chainframe.decode._events import decode_event, decode_events, event_fields, with_event_columns
from chainframe.decode._transfers import (
    ERC20_TRANSFER,
    ERC721_TRANSFER,
    ERC1155_BATCH,
    ERC1155_SINGLE,
    erc20_transfers,
    erc721_transfers,
    erc1155_transfers,
)

__all__ = [
    "AbiType",
    "ERC1155_BATCH",
    "ERC1155_SINGLE",
    "ERC20_TRANSFER",
    "ERC721_TRANSFER",
    "Event",
    "Param",
    "as_events",
    "binary",
    "decode_event",
    "decode_events",
    "erc1155_transfers",
    "erc20_transfers",
    "erc721_transfers",
    "event_fields",
    "events_from_abi",
    "keccak256",
    "parse_event",
    "split_top",
    "unhex0x",
    "with_event_columns",
]
