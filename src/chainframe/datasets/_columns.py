"""The one table of column names and types, shared by every dataset: a name means the same thing, with the same
type, wherever it appears.

Type rules (also in docs/datasets-and-decoding.md):

- Block numbers, indexes, gas, nonces, sizes, timestamps: ``uint64``. ``block_time`` is the timestamp as a UTC
  ``timestamp[s]``.
- Transaction type, status, y parity: ``uint8``. JSON-RPC error codes (negative ones too): ``int64``.
- Addresses ``fixed_size_binary(20)``, hashes ``fixed_size_binary(32)``, blooms ``fixed_size_binary(256)``, the
  block nonce ``fixed_size_binary(8)``, calldata and other variable data ``binary``. ``hex_view`` (Polars) and the
  DuckDB macro ``hex0x`` show them as ``0x`` text.
- Amounts of wei (values, gas prices, fees, balances) and difficulties: ``decimal128(38, 0)``, which sums in DuckDB
  and Polars. It holds every amount of ether there is (about 1.2e26 wei exist; the type holds up to 1e38 - 1). A value
  that does not fit raises :class:`ValueOutOfRange` naming the column and block; nothing is wrapped or rounded.
- 256-bit words with no such bound (storage values, ``r`` and ``s``): ``fixed_size_binary(32)``, big-endian. Lossless.
- JSON null stays null (pending blocks, contract creations, pre-Byzantium status). Lists are Arrow lists.
"""

from __future__ import annotations

from functools import cache
from typing import Literal, NamedTuple

import pyarrow as pa

from chainframe._u256 import U256 as U256

Kind = Literal[
    "u64", "u8", "bool", "wei", "word", "address", "hash", "data", "bytes4", "bytes8", "bloom", "timestamp", "string",
    "hash_list", "bytes_list", "u64_list", "access_list", "withdrawals", "authorizations", "i64",
]  # fmt: skip

ACCESS_LIST = pa.list_(pa.struct([("address", pa.binary(20)), ("storage_keys", pa.list_(pa.binary(32)))]))
WITHDRAWALS = pa.list_(
    pa.struct(
        [("index", pa.uint64()), ("validator_index", pa.uint64()), ("address", pa.binary(20)), ("amount", pa.uint64())]
    )
)
AUTHORIZATIONS = pa.list_(
    pa.struct(
        [
            ("chain_id", pa.uint64()),
            ("address", pa.binary(20)),
            ("nonce", pa.uint64()),
            ("y_parity", pa.uint8()),
            ("r", pa.binary(32)),
            ("s", pa.binary(32)),
        ]
    )
)
ARROW: dict[Kind, pa.DataType] = {
    "u64": pa.uint64(),
    "i64": pa.int64(),
    "u8": pa.uint8(),
    "bool": pa.bool_(),
    "wei": pa.decimal128(38, 0),
    "word": pa.binary(32),
    "address": pa.binary(20),
    "hash": pa.binary(32),
    "data": pa.binary(),
    "bytes4": pa.binary(4),
    "bytes8": pa.binary(8),
    "bloom": pa.binary(256),
    "timestamp": pa.timestamp("s", tz="UTC"),
    "string": pa.string(),
    "hash_list": pa.list_(pa.binary(32)),
    "bytes_list": pa.list_(pa.binary()),
    "u64_list": pa.list_(pa.uint64()),
    "access_list": ACCESS_LIST,
    "withdrawals": WITHDRAWALS,
    "authorizations": AUTHORIZATIONS,
}


# A NamedTuple, not a frozen dataclass: every run imports this module, and a dataclass's generated methods cost about
# 1.5 CPU-ms at import (issue 43: start-up since b6ac909).
class Column(NamedTuple):
    name: str
    kind: Kind
    doc: str

    def kind_for(self, u256: U256) -> Kind:
        return "word" if self.kind == "wei" and u256 == "binary" else self.kind

    def arrow_type_for(self, u256: U256) -> pa.DataType:
        return ARROW[self.kind_for(u256)]

    @property
    def arrow_type(self) -> pa.DataType:
        return ARROW[self.kind]


def _table(*rows: tuple[str, Kind, str]) -> dict[str, Column]:
    return {name: Column(name, kind, doc) for name, kind, doc in rows}


COLUMNS: dict[str, Column] = _table(
    # where
    ("chain_id", "u64", "EIP-155 id of the chain the row was read from"),
    ("block_number", "u64", "number of the block holding the item (for blocks and uncles: the block itself)"),
    ("block_hash", "hash", "hash of that block; kept so a dataset can be checked and repaired after a reorg"),
    ("block_timestamp", "u64", "unix time of that block, as the node sent it where it did"),
    ("block_time", "timestamp", "block_timestamp as a UTC timestamp"),
    ("transaction_index", "u64", "position of the transaction in its block"),
    ("transaction_hash", "hash", "hash of the transaction"),
    ("log_index", "u64", "position of the log in its block"),
    # blocks
    ("parent_hash", "hash", "hash of the parent block"),
    ("nonce", "u64", "sender's transaction count before this transaction / account nonce"),
    ("block_nonce", "bytes8", "proof-of-work nonce of the block (zero since the merge); null when pending"),
    ("sha3_uncles", "hash", "hash of the uncles list"),
    ("logs_bloom", "bloom", "bloom filter of the logs"),
    ("transactions_root", "hash", "root of the transactions trie"),
    ("state_root", "hash", "root of the state trie after the block"),
    ("receipts_root", "hash", "root of the receipts trie"),
    ("miner", "address", "beneficiary of the block's fees"),
    ("difficulty", "wei", "proof-of-work difficulty (0 since the merge)"),
    ("total_difficulty", "wei", "sum of difficulties up to this block; null where the node leaves it out"),
    ("extra_data", "data", "free-form data chosen by the block's producer"),
    ("size", "u64", "block size in bytes"),
    ("gas_limit", "u64", "most gas the block may use"),
    ("gas_used", "u64", "gas used (block: by all its transactions; receipt: by this transaction alone)"),
    ("timestamp", "u64", "unix time of the block"),
    ("uncles", "hash_list", "hashes of the block's uncles"),
    ("transaction_hashes", "hash_list", "hashes of the block's transactions, in order"),
    ("transaction_count", "u64", "number of transactions in the block"),
    ("mix_hash", "hash", "mix hash (prevRandao since the merge)"),
    ("base_fee_per_gas", "wei", "EIP-1559 base fee"),
    ("withdrawals", "withdrawals", "validator withdrawals (amounts in gwei)"),
    ("withdrawals_root", "hash", "root of the withdrawals trie"),
    ("blob_gas_used", "u64", "blob gas used (block: all blobs; receipt: this transaction's)"),
    ("excess_blob_gas", "u64", "EIP-4844 excess blob gas"),
    ("parent_beacon_block_root", "hash", "EIP-4788 parent beacon block root"),
    ("requests_hash", "hash", "EIP-7685 requests hash"),
    # uncles
    ("uncle_index", "u64", "position of the uncle in its nephew's uncle list"),
    ("nephew_number", "u64", "number of the block that included the uncle"),
    # transactions
    ("from_address", "address", "sender"),
    ("to_address", "address", "recipient; null for a contract creation"),
    ("value", "wei", "amount transferred: wei for a transaction, token units for a token transfer"),
    ("token_id", "wei", "token id; by the u256 rule (ids are often hashes above 1e38: --u256 binary keeps them whole)"),
    ("operator", "address", "the account that moved ERC-1155 tokens (the holder or an approved operator)"),
    ("batch_index", "u64", "the token id's place in an ERC-1155 TransferBatch (0 for a TransferSingle)"),
    ("gas", "u64", "gas provided by the sender"),
    ("gas_price", "wei", "gas price (for EIP-1559 transactions the effective price the node reports)"),
    ("max_fee_per_gas", "wei", "EIP-1559 fee cap"),
    ("max_priority_fee_per_gas", "wei", "EIP-1559 tip cap"),
    ("max_fee_per_blob_gas", "wei", "EIP-4844 blob fee cap"),
    ("input", "data", "calldata (or init code for a creation)"),
    ("transaction_type", "u8", "EIP-2718 type: 0 legacy, 1 access list, 2 dynamic fee, 3 blob, 4 set code"),
    ("transaction_chain_id", "u64", "chain id inside the signed transaction; null for pre-EIP-155 legacy"),
    ("v", "u64", "signature v"),
    ("r", "word", "signature r"),
    ("s", "word", "signature s"),
    ("y_parity", "u8", "signature y parity"),
    ("access_list", "access_list", "EIP-2930 access list"),
    ("blob_versioned_hashes", "hash_list", "EIP-4844 blob hashes"),
    ("authorization_list", "authorizations", "EIP-7702 authorizations"),
    # receipts
    ("contract_address", "address", "created contract; null unless the transaction created one"),
    ("cumulative_gas_used", "u64", "gas used in the block up to and including this transaction"),
    ("effective_gas_price", "wei", "price per gas actually paid"),
    ("status", "u8", "1 success, 0 failure; null before Byzantium (see root)"),
    ("root", "hash", "post-transaction state root, pre-Byzantium receipts only"),
    ("blob_gas_price", "wei", "price per blob gas paid"),
    ("log_count", "u64", "number of logs the transaction emitted"),
    # logs
    ("address", "address", "contract that emitted the log / account of a proof / holder of an ERC-20 balance"),
    ("topics", "hash_list", "indexed arguments; topics[1] (DuckDB) is usually the event signature"),
    ("data", "data", "non-indexed arguments"),
    ("removed", "bool", "true if the log was removed by a reorganization"),
    # proofs
    ("balance", "wei", "account balance (erc20_balances: the holder's balance of the token, in its smallest units)"),
    ("code_hash", "hash", "hash of the account's code"),
    ("storage_hash", "hash", "root of the account's storage trie"),
    ("account_proof", "bytes_list", "RLP trie nodes from the state root to the account"),
    ("storage_key", "word", "storage slot as asked (32 bytes; some nodes echo it as a short quantity, e.g. 0x0)"),
    ("storage_value", "word", "value in the slot"),
    ("storage_proof", "bytes_list", "RLP trie nodes from the storage root to the slot"),
    # call traces
    ("call_index", "u64", "which traced call of the request list"),
    ("trace_address", "u64_list", "path of the frame in the call tree ([] for the top call)"),
    ("depth", "u64", "nesting depth of the frame (0 for the top call)"),
    ("call_type", "string", "CALL, STATICCALL, DELEGATECALL, CALLCODE, CREATE, CREATE2, SELFDESTRUCT"),
    ("output", "data", "returned data (of a reverted call: its revert data)"),
    ("error", "string", "error of the frame or call, if it failed (the node's message)"),
    ("revert_reason", "string", "decoded revert reason, if any"),
    ("subcalls", "u64", "number of direct child frames"),
    ("state", "string", "prestate rows: 'pre' or 'post' (diff mode), 'pre' otherwise"),
    ("code", "data", "account code"),
    ("storage_slot", "hash", "storage slot"),
    # derived
    ("relationship", "string", "how the address appears: sender, recipient, created_contract, log_emitter, log_topic"),
    ("selector", "bytes4", "function selector: the first 4 bytes of a call's input"),
    ("arguments_size", "u64", "bytes of the call's input after its selector (cryo's and geth's 4byteTracer's size)"),
    ("call_count", "u64", "calls in the block with this selector and arguments size"),
    # block traces
    ("transfer_type", "string", "transaction, call, create, selfdestruct, block_reward, uncle_reward or withdrawal"),
    ("withdrawal_index", "u64", "the withdrawal's own index (withdrawal rows); null for other movements"),
    ("deployer", "address", "sender of the transaction that created the contract"),
    ("factory", "address", "account whose frame created the contract: a contract, or the sender for a top-level one"),
    ("init_code_hash", "hash", "keccak of the creation's init code"),
    # eth_call and the ERC-20 views
    ("error_code", "i64", "JSON-RPC error code of a failed call (3: reverted); null if it succeeded"),
    ("token_address", "address", "the ERC-20 token contract read (erc20_transfers call it address: the log emitter)"),
    ("total_supply", "wei", "the token's totalSupply(), in its smallest units; null if the call failed"),
    ("name", "string", "the token's name(): ABI string or bytes32 text (MKR); null if absent, failed or not text"),
    ("symbol", "string", "the token's symbol(), read as name is"),
    ("decimals", "u8", "the token's decimals(); null if absent, failed, or above 255"),
    # chain families (issue 43): null on a chain that has none
    ("source_hash", "hash", "OP Stack deposit: hash identifying the deposit's origin on L1"),
    ("mint", "wei", "OP Stack deposit: wei minted on L2 for it"),
    ("is_system_tx", "bool", "OP Stack deposit: a system transaction (before Regolith: gas-free)"),
    ("deposit_nonce", "u64", "OP Stack deposit receipt: the sender's nonce (from Regolith)"),
    ("deposit_receipt_version", "u8", "OP Stack deposit receipt: its encoding's version (from Canyon)"),
    ("l1_fee", "wei", "OP Stack, Scroll, Mantle: fee paid for the transaction's data on L1"),
    ("l1_gas_price", "wei", "OP Stack: L1 base fee the L1 fee was computed with"),
    ("l1_gas_used", "u64", "OP Stack: L1 gas the transaction's data was charged as"),
    # A string, the one lossless type: nodes render a float (op-geth a big.Float's shortest "0.684" or "1e+06",
    # op-reth an f64), so a number type would round, or assume the 10^6 divisor the node does not state.
    ("l1_fee_scalar", "string", "OP Stack before Ecotone: the L1 fee scalar, the node's decimal text as sent"),
    ("l1_base_fee_scalar", "u64", "OP Stack from Ecotone: scalar of the L1 base fee"),
    ("l1_blob_base_fee", "wei", "OP Stack from Ecotone: L1 blob base fee the L1 fee was computed with"),
    ("l1_blob_base_fee_scalar", "u64", "OP Stack from Ecotone: scalar of the L1 blob base fee"),
    ("gas_used_for_l1", "u64", "Arbitrum: the part of gas_used that paid for posting the transaction to L1"),
    ("l1_block_number", "u64", "Arbitrum: the L1 block number ArbOS saw (block: in its mix hash)"),
    ("send_root", "hash", "Arbitrum: root of the L2-to-L1 send Merkle tree after the block (its extra data)"),
    ("send_count", "u64", "Arbitrum: number of L2-to-L1 sends so far (in its mix hash)"),
    ("ext_data_hash", "hash", "Avalanche C-Chain: hash of the block's atomic transactions (block_extra_data)"),
    ("ext_data_gas_used", "u64", "Avalanche C-Chain from Apricot 4: gas the block's atomic transactions used"),
    ("block_gas_cost", "u64", "Avalanche C-Chain from Apricot 4: the minimum gas the block had to pay to be built"),
    ("block_extra_data", "data", "Avalanche C-Chain: the block's atomic transactions, in no transactions root"),
    ("timestamp_milliseconds", "u64", "Avalanche C-Chain from Granite: the block's time in milliseconds"),
    ("min_delay_excess", "u64", "Avalanche C-Chain from Granite: the excess setting the minimum block delay"),
    ("arbos_version", "u64", "Arbitrum: the ArbOS version the block ran (its mix hash's third 8 bytes)"),
    ("request_id", "hash", "Arbitrum deposit, contract and submit-retryable transactions: the L1 message's id"),
    ("ticket_id", "hash", "Arbitrum retry transaction: the retryable ticket it redeems"),
    ("refund_to", "address", "Arbitrum retry and submit-retryable transactions: who gets the fee refund"),
    ("max_refund", "wei", "Arbitrum retry transaction: the most refunded to refund_to (the rest to the sender)"),
    ("submission_fee_refund", "wei", "Arbitrum retry transaction: submission fee refunded if it succeeds"),
    ("l1_base_fee", "wei", "Arbitrum submit-retryable transaction: L1 base fee when the ticket was submitted"),
    ("deposit_value", "wei", "Arbitrum submit-retryable transaction: wei deposited from L1 with the ticket"),
    ("retry_to", "address", "Arbitrum submit-retryable transaction: the ticket's callee (null: a creation)"),
    ("retry_value", "wei", "Arbitrum submit-retryable transaction: wei the ticket's call sends"),
    ("retry_data", "data", "Arbitrum submit-retryable transaction: the ticket's call data"),
    ("beneficiary", "address", "Arbitrum submit-retryable transaction: who may cancel the ticket, and gets its value"),
    ("max_submission_fee", "wei", "Arbitrum submit-retryable transaction: the most the ticket's submission may cost"),
    ("operator_fee_scalar", "u64", "OP Stack from Isthmus: the operator fee's scalar (omitted by the node when 0)"),
    ("operator_fee_constant", "u64", "OP Stack from Isthmus: the operator fee's constant (omitted by the node when 0)"),
    ("da_footprint_gas_scalar", "u64", "OP Stack from Jovian: gas charged per byte of data-availability footprint"),
    ("is_state_sync", "bool", "Polygon PoS: Bor's state-sync transaction, in neither root of its block"),
    ("queue_index", "u64", "Scroll L1 message: its index in the L1 message queue (in its hash)"),
    ("eth_value", "wei", "Mantle deposit: BVM_ETH minted on L2 for it (nil and 0 encode alike)"),
    ("eth_tx_value", "wei", "Mantle deposit: BVM_ETH it transfers to its callee; null where the deposit has none"),
    ("token_ratio", "wei", "Mantle: the MNT/ETH price ratio the node converted the L1 fee with (an integer)"),
    # state diffs: each pair named for what it holds, so a name keeps one type across the catalogue
    ("change_type", "string", "state diffs: 'transaction', 'system_call' (before them) or 'withdrawal' (after)"),
    ("balance_before", "wei", "balance_diffs: the account's balance before the change"),
    ("balance_after", "wei", "balance_diffs: the account's balance after the change"),
    ("nonce_before", "u64", "nonce_diffs: the account's nonce before the change"),
    ("nonce_after", "u64", "nonce_diffs: the account's nonce after the change"),
    ("code_before", "data", "code_diffs: the account's code before the change (empty: none)"),
    ("code_after", "data", "code_diffs: the account's code after the change (empty: none, or destroyed)"),
    ("storage_value_before", "word", "storage_diffs: the slot's value before the change"),
    ("storage_value_after", "word", "storage_diffs: the slot's value after the change"),
)


def schema(names: tuple[str, ...], u256: U256 = "decimal") -> pa.Schema:
    """The Arrow schema of a dataset with these columns, from the one table."""
    return _schema(tuple(names), u256)


@cache
def _schema(names: tuple[str, ...], u256: U256) -> pa.Schema:
    # Made once per dataset and u256 form, not for every piece: a schema is immutable, and the chain families' columns
    # made building one each time a cost of every piece (issue 43).
    return pa.schema([pa.field(n, COLUMNS[n].arrow_type_for(u256)) for n in names])
