"""Decoding event logs and function calls into typed columns: signatures and ABIs, keccak, the token-transfer frames;
where ABIs come from (a folder of Sourcify and Etherscan files) and which one a proxy decodes with."""

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
from chainframe.decode._abi_sources import AbiFolder, AbiSource, ContractAbi, address_of, checksummed, refuse_clashes
from chainframe.decode._binary import binary, unhex0x
from chainframe.decode._calls import CALL, call_columns, call_fields, decode_calls, output_fields, selector_rows
from chainframe.decode._contract_abis import AbiKind, Decoding, Stretch, decodings, stretches
from chainframe.decode._events import decode_event, decode_events, event_fields, with_event_columns
from chainframe.decode._proxies import (
    BEACON_SLOT,
    IMPLEMENTATION_SLOT,
    PROXIABLE_SLOT,
    Code,
    Span,
    code_at,
    implementations,
)
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
    "AbiFolder",
    "AbiKind",
    "AbiSource",
    "AbiType",
    "BEACON_SLOT",
    "CALL",
    "Code",
    "ContractAbi",
    "Decoding",
    "ERC1155_BATCH",
    "ERC1155_SINGLE",
    "ERC20_TRANSFER",
    "ERC721_TRANSFER",
    "Event",
    "Function",
    "IMPLEMENTATION_SLOT",
    "PROXIABLE_SLOT",
    "Param",
    "Span",
    "Stretch",
    "address_of",
    "as_events",
    "as_functions",
    "binary",
    "call_columns",
    "call_fields",
    "checksummed",
    "code_at",
    "decode_calls",
    "decode_event",
    "decode_events",
    "decodings",
    "erc1155_transfers",
    "erc20_transfers",
    "erc721_transfers",
    "event_fields",
    "events_from_abi",
    "functions_from_abi",
    "implementations",
    "keccak256",
    "output_fields",
    "parse_event",
    "parse_function",
    "refuse_clashes",
    "selector_rows",
    "split_top",
    "stretches",
    "unhex0x",
    "with_event_columns",
]
