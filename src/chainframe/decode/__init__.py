"""Decoding event logs and function calls into typed columns: signatures and ABIs, keccak, the token-transfer frames."""

from chainframe._keccak import keccak256
from chainframe.decode._abi import (
    AbiType,
    Event,
    Function,
    Param,
    as_events,
    as_functions,
    events_from_abi,
    functions_from_abi,
    parse_event,
    parse_function,
    split_top,
)
from chainframe.decode._binary import binary, unhex0x
from chainframe.decode._calls import CALL, call_columns, call_fields, decode_calls
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
    "CALL",
    "ERC1155_BATCH",
    "ERC1155_SINGLE",
    "ERC20_TRANSFER",
    "ERC721_TRANSFER",
    "Event",
    "Function",
    "Param",
    "as_events",
    "as_functions",
    "binary",
    "call_columns",
    "call_fields",
    "decode_calls",
    "decode_event",
    "decode_events",
    "erc1155_transfers",
    "erc20_transfers",
    "erc721_transfers",
    "event_fields",
    "events_from_abi",
    "functions_from_abi",
    "keccak256",
    "parse_event",
    "parse_function",
    "split_top",
    "unhex0x",
    "with_event_columns",
]
