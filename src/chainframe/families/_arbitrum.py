"""Arbitrum Nitro (Arbitrum One, Nova, Sepolia): ArbOS's own transaction types, its header, and the price rule it does
not keep.

- Its transaction types carry no signature; each is ``type || rlp(fields)``, the fields in the order of Nitro's
  go-ethereum fork (``core/types/arb_types.go``), the sender among them, so the hash proves it:
  deposit 0x64 ``[chainId, requestId, from, to, value]``; unsigned 0x65
  ``[chainId, from, nonce, maxFeePerGas, gas, to, value, input]``; contract 0x66
  ``[chainId, requestId, from, maxFeePerGas, gas, to, value, input]``; retry 0x68
  ``[chainId, nonce, from, maxFeePerGas, gas, to, value, input, ticketId, refundTo, maxRefund, submissionFeeRefund]``;
  submit retryable 0x69 ``[chainId, requestId, from, l1BaseFee, depositValue, maxFeePerGas, gas, retryTo,
  retryValue, beneficiary, maxSubmissionFee, refundTo, retryData]``; internal 0x6a ``[chainId, data]`` (from and to
  ArbOS's address ``0x...0a4b05``). A ``to`` of none (a creation) is RLP's empty string. Their receipts encode as
  Ethereum's.
- A submit-retryable's ``to`` (ArbRetryableTx, ``0x...6e``) and ``input`` (its fields as that precompile's
  ``submitRetryable`` call) are the node's rendering, in no encoding: checked equal to what its fields give.
- The header: the send root as its extra data; the send count, L1 block number and ArbOS version in its mix hash.
- Nitro charges the block's base fee, not ``min(max fee, base fee + tip)``: no header commits to the price paid.
- The legacy type 0x78 (Arbitrum One's blocks from before Nitro) is stored and declared unproven.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from chainframe._rlp import RlpItem, python_rlp, uint
from chainframe.families._family import ChainFamily, Row, TransactionType, integer

DEPOSIT, UNSIGNED, CONTRACT, RETRY, SUBMIT_RETRYABLE, INTERNAL = 0x64, 0x65, 0x66, 0x68, 0x69, 0x6A
ARBOS = bytes.fromhex("00000000000000000000000000000000000a4b05")


def _to(value: bytes | None) -> bytes:
    return value or b""  # Nitro's ``rlp:"nil"``: no callee (a creation) is the empty string


def _internal(tx: Row) -> bytes:
    return bytes([INTERNAL]) + python_rlp([integer(tx["transaction_chain_id"]), tx["input"]])


def _deposit(tx: Row) -> bytes:
    fields: list[RlpItem] = [integer(tx["transaction_chain_id"]), tx["request_id"], tx["from_address"],
                             tx["to_address"], integer(tx["value"])]  # fmt: skip
    return bytes([DEPOSIT]) + python_rlp(fields)


def _unsigned(tx: Row) -> bytes:
    fields: list[RlpItem] = [
        integer(tx["transaction_chain_id"]), tx["from_address"], uint(tx["nonce"]), integer(tx["max_fee_per_gas"]),
        uint(tx["gas"]), _to(tx["to_address"]), integer(tx["value"]), tx["input"],
    ]  # fmt: skip
    return bytes([UNSIGNED]) + python_rlp(fields)


def _contract(tx: Row) -> bytes:
    fields: list[RlpItem] = [
        integer(tx["transaction_chain_id"]), tx["request_id"], tx["from_address"], integer(tx["max_fee_per_gas"]),
        uint(tx["gas"]), _to(tx["to_address"]), integer(tx["value"]), tx["input"],
    ]  # fmt: skip
    return bytes([CONTRACT]) + python_rlp(fields)


def _retry(tx: Row) -> bytes:
    fields: list[RlpItem] = [
        integer(tx["transaction_chain_id"]), uint(tx["nonce"]), tx["from_address"], integer(tx["max_fee_per_gas"]),
        uint(tx["gas"]), _to(tx["to_address"]), integer(tx["value"]), tx["input"], tx["ticket_id"], tx["refund_to"],
        integer(tx["max_refund"]), integer(tx["submission_fee_refund"]),
    ]  # fmt: skip
    return bytes([RETRY]) + python_rlp(fields)


def _submit_retryable(tx: Row) -> bytes:
    fields: list[RlpItem] = [
        integer(tx["transaction_chain_id"]), tx["request_id"], tx["from_address"], integer(tx["l1_base_fee"]),
        integer(tx["deposit_value"]), integer(tx["max_fee_per_gas"]), uint(tx["gas"]), _to(tx["retry_to"]),
        integer(tx["retry_value"]), tx["beneficiary"], integer(tx["max_submission_fee"]), tx["refund_to"],
        tx["retry_data"],
    ]  # fmt: skip
    return bytes([SUBMIT_RETRYABLE]) + python_rlp(fields)


ARB_RETRYABLE_TX = bytes.fromhex("000000000000000000000000000000000000006e")
_SUBMIT_RETRYABLE_SELECTOR = bytes.fromhex("c9f95d32")


def _word(value: Any) -> bytes:
    return int(integer(value).hex() or "0", 16).to_bytes(32, "big")


def _submit_retryable_call(tx: Row) -> Mapping[str, Any]:
    """What Nitro renders a submit retryable as (``ArbitrumSubmitRetryableTx.to`` and ``.data``): a call of
    ArbRetryableTx's ``submitRetryable`` with the encoded fields as its arguments, the retry data last."""
    data: bytes = tx["retry_data"] or b""
    head = b"".join([
        tx["request_id"], *(_word(tx[c]) for c in ("l1_base_fee", "deposit_value", "retry_value", "max_fee_per_gas")),
        _word(tx["gas"]), _word(tx["max_submission_fee"]),
        *(bytes(12) + (tx[c] or bytes(20)) for c in ("refund_to", "beneficiary", "retry_to")),
    ])  # fmt: skip
    tail = _word(len(head) + 32) + _word(len(data)) + data + bytes(-len(data) % 32)
    return {"to_address": ARB_RETRYABLE_TX, "input": _SUBMIT_RETRYABLE_SELECTOR + head + tail}


def _type(code: int, name: str, encode: Callable[[Row], bytes], reads: tuple[str, ...], **more: Any) -> TransactionType:
    """A Nitro type: every field it reads has no empty form except a creation's callee."""
    needs = tuple(c for c in reads if c not in ("to_address", "retry_to"))
    return TransactionType(code, name, encode, reads=reads, needs=needs, **more)


_COMMON = ("transaction_chain_id", "from_address", "max_fee_per_gas", "gas", "to_address", "value", "input")
_TYPES = (
    _type(DEPOSIT, "deposit", _deposit, ("transaction_chain_id", "request_id", "from_address", "to_address", "value")),
    _type(UNSIGNED, "unsigned", _unsigned, (*_COMMON, "nonce")),
    _type(CONTRACT, "contract", _contract, (*_COMMON, "request_id"),
          creation="an Arbitrum contract transaction's encoding holds no nonce: the address a creation of it made "
          "follows from its sender's nonce at execution, which nothing proven reports"),
    _type(RETRY, "retry", _retry, (*_COMMON, "nonce", "ticket_id", "refund_to", "max_refund", "submission_fee_refund")),
    _type(SUBMIT_RETRYABLE, "submit retryable", _submit_retryable, (
        "transaction_chain_id", "request_id", "from_address", "l1_base_fee", "deposit_value", "max_fee_per_gas", "gas",
        "retry_to", "retry_value", "beneficiary", "max_submission_fee", "refund_to", "retry_data",
    ), rendered=_submit_retryable_call),
    _type(INTERNAL, "internal", _internal, ("transaction_chain_id", "input"), sender=ARBOS),
)  # fmt: skip


class ArbitrumNitro(ChainFamily):
    name = "arbitrum-nitro"
    doc = "Arbitrum Nitro rollups: ArbOS's own transaction types (retryables, deposits...), the base fee as price."
    chain_ids: ClassVar[Mapping[int, str]] = {42161: "Arbitrum One", 42170: "Arbitrum Nova", 421614: "Arbitrum Sepolia"}
    transaction_types: ClassVar[Mapping[int, TransactionType]] = {t.code: t for t in _TYPES}
    columns: ClassVar[Mapping[str, Mapping[str, int | None]]] = {
        "blocks": dict.fromkeys(("send_root", "send_count", "l1_block_number", "arbos_version"), None),
        "receipts": dict.fromkeys(("gas_used_for_l1", "l1_block_number"), None),
        "transactions": {
            # request_id and refund_to: more than one type has them (deposit, contract, submit retryable; retry, submit
            # retryable), so their rows are not screened by type
            **dict.fromkeys(("request_id", "refund_to"), None),
            **dict.fromkeys(("ticket_id", "max_refund", "submission_fee_refund"), RETRY),
            **dict.fromkeys(
                (
                    "l1_base_fee",
                    "deposit_value",
                    "retry_to",
                    "retry_value",
                    "retry_data",
                    "beneficiary",
                    "max_submission_fee",
                ),
                SUBMIT_RETRYABLE,
            ),
        },
    }
    unprovable: ClassVar[Mapping[str, str]] = {
        "receipts.effective_gas_price": "Arbitrum charges the block's base fee, not Ethereum's min(max fee, base fee "
        "+ tip), and no header commits to the price paid",
    }

    def header_columns(self, extra_data: bytes, mix_hash: bytes) -> dict[str, Any]:
        """Nitro's header: the send root as its extra data; the send count, L1 block number and ArbOS version in its
        mix hash, 8 bytes each (Nitro's ``DeserializeHeaderExtraInformation``)."""
        return {
            "send_root": extra_data,
            "send_count": int.from_bytes(mix_hash[:8], "big"),
            "l1_block_number": int.from_bytes(mix_hash[8:16], "big"),
            "arbos_version": int.from_bytes(mix_hash[16:24], "big"),
        }


ARBITRUM_NITRO = ArbitrumNitro()
