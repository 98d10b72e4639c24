"""Nitro's own transaction types encoded as its go-ethereum fork encodes them (issue 43), checked against hashes a
Nitro chain gave: no recorded Arbitrum block in public test data holds a retryable, so the vectors are the three
transactions of a retryable's life on a Nitro dev chain (412346, nitro-testnode's L2) that Nethermind's Arbitrum
plugin pins in its tests ("Data from dev chain simulation": NethermindEth/nethermind-arbitrum,
``src/Nethermind.Arbitrum.Test/BlockProcessing/TxDecoderTests.cs`` at ``06161327d41d79a9b0bb06ae66a5cebfc0d2d6d2``;
its code is under the Business Source License 1.1: only these values are used, no code). The retry's ticket is the
submission's hash, as Nitro makes it, so the two vectors check each other.

A changed field of each changes the hash: every field is in the encoding, in its place.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest

from chainframe._keccak import keccak256
from chainframe.families import ARBITRUM_NITRO

DEV_CHAIN = 412346
SENDER = bytes.fromhex("dd6bd74674c356345db88c354491c7d3173c6806")
CALLEE = bytes.fromhex("3fab184622dc19b6109349b94811493bf2a45362")
REFUND = bytes.fromhex("93b4c114b40ecf1fc34745400a1b9b9115c34e42")
SUBMISSION = bytes.fromhex("cfb3f4f75e092c28579f5b536c8919d63b823bf487c2c946ae8ad539ed2a971d")

VECTORS: dict[int, tuple[dict[str, Any], str]] = {
    0x69: (
        {
            "transaction_chain_id": DEV_CHAIN, "request_id": (1).to_bytes(32, "big"), "from_address": SENDER,
            "l1_base_fee": Decimal(39), "deposit_value": Decimal(10021000000054600),
            "max_fee_per_gas": Decimal(1000000000), "gas": 21000, "retry_to": CALLEE, "retry_value": Decimal(10**16),
            "beneficiary": REFUND, "max_submission_fee": Decimal(54600), "refund_to": REFUND, "retry_data": b"",
        },
        SUBMISSION.hex(),
    ),
    0x68: (
        {
            "transaction_chain_id": DEV_CHAIN, "nonce": 0, "from_address": SENDER,
            "max_fee_per_gas": Decimal(100000000), "gas": 21000, "to_address": CALLEE, "value": Decimal(10**16),
            "input": b"", "ticket_id": SUBMISSION, "refund_to": REFUND, "max_refund": Decimal(2100000054600),
            "submission_fee_refund": Decimal(54600),
        },
        "f2df0912b3d8b8e41d4d88fae405def3a64ae0ef1a229d1b517ef2f5c07e2c15",
    ),
    0x64: (
        {
            "transaction_chain_id": DEV_CHAIN, "request_id": (9).to_bytes(32, "big"),
            "from_address": bytes.fromhex("502fae7d46d88f08fc2f8ed27fcb2ab183eb3e1f"),
            "to_address": bytes.fromhex("3f1eae7d46d88f08fc2f8ed27fcb2ab183eb2d0e"), "value": Decimal(10**23),
        },
        "38132c766a25034f7805a2f47c1bd4b23a97b979cf7b52bdcf29972c2e13f1e6",
    ),
}  # fmt: skip


@pytest.mark.parametrize("code", VECTORS, ids=hex)
def test_the_hash_a_nitro_chain_gave(code: int) -> None:
    row, want = VECTORS[code]
    kind = ARBITRUM_NITRO.transaction_types[code]
    assert set(kind.reads) == set(row)  # the encoding reads every field the vector has, and no other
    assert keccak256(kind.encode(row)).hex() == want


@pytest.mark.parametrize("code", VECTORS, ids=hex)
def test_every_field_is_in_the_hash(code: int) -> None:
    row, want = VECTORS[code]
    kind = ARBITRUM_NITRO.transaction_types[code]
    for field, value in row.items():
        if isinstance(value, bytes):
            changed: Any = value[:-1] + bytes([value[-1] ^ 1]) if value else b"\x01"
        else:
            changed = value + 1
        assert keccak256(kind.encode({**row, field: changed})).hex() != want, field


def test_a_creation_has_no_callee_in_its_encoding() -> None:
    """Nitro's ``rlp:"nil"``: a submit-retryable or retry with no callee encodes it as RLP's empty string, and only
    the callee may be missing (``needs``)."""
    row, _ = VECTORS[0x69]
    kind = ARBITRUM_NITRO.transaction_types[0x69]
    assert b"\x80" in kind.encode({**row, "retry_to": None})
    assert set(kind.reads) - set(kind.needs) == {"retry_to"}
    assert set(ARBITRUM_NITRO.transaction_types[0x68].reads) - set(ARBITRUM_NITRO.transaction_types[0x68].needs) == {
        "to_address"
    }


def test_a_submit_retryable_is_rendered_as_nitro_renders_it() -> None:
    """Its ``to`` and ``input`` are in no encoding: the node renders them from the fields (ArbRetryableTx's
    ``submitRetryable`` call), so verify checks them against what the fields give. The selector is that signature's
    and eth-abi reads the call back into the fields."""
    from eth_abi import decode as abi_decode  # type: ignore[attr-defined]

    row, _ = VECTORS[0x69]
    rendered = ARBITRUM_NITRO.transaction_types[0x69].rendered
    assert rendered is not None
    call = rendered({**row, "retry_data": bytes(range(40))})
    signature = "submitRetryable(bytes32,uint256,uint256,uint256,uint256,uint64,uint256,address,address,address,bytes)"
    assert call["input"][:4] == keccak256(signature.encode())[:4]
    assert call["to_address"] == bytes.fromhex("00" * 19 + "6e")
    types = signature[signature.index("(") + 1 : -1].split(",")
    decoded = abi_decode(types, call["input"][4:])
    fields = ("request_id", "l1_base_fee", "deposit_value", "retry_value", "max_fee_per_gas", "gas",
              "max_submission_fee", "refund_to", "beneficiary", "retry_to")  # fmt: skip
    got = [bytes.fromhex(v[2:]) if isinstance(v, str) else v for v in decoded[:-1]]  # addresses come as text
    assert got == [v if isinstance(v, bytes) else int(v) for v in (row[f] for f in fields)]
    assert decoded[-1] == bytes(range(40))


@pytest.mark.parametrize("column", [None, "input", "to_address"])
def test_verify_checks_a_submit_retryables_rendering(column: str | None) -> None:
    """A block of the one submit retryable (its root the trie of its encoding): proven as stored; its ``input`` or
    ``to_address`` changed, which no encoding holds, fails that column, the hash and root still holding."""
    from chainframe.datasets import TRANSACTIONS
    from chainframe.verify import Report
    from chainframe.verify._transactions import check_transactions_roots
    from chainframe.verify._trie import ordered_root

    row, want = VECTORS[0x69]
    kind = ARBITRUM_NITRO.transaction_types[0x69]
    assert kind.rendered is not None
    stored = {**row, **kind.rendered(row), "block_number": 1, "transaction_index": 0, "transaction_type": 0x69,
              "transaction_hash": bytes.fromhex(want), "value": Decimal(0)}  # fmt: skip
    if column is not None:
        stored[column] = bytes(20) if column == "to_address" else stored[column] + b"\x00"
    schema = pa.schema([TRANSACTIONS.schema.field(c) for c in stored])
    transactions = pa.Table.from_pylist([stored], schema=schema)
    blocks = pa.table({"block_number": pa.array([1], pa.uint64()),
                       "transactions_root": pa.array([ordered_root([kind.encode(row)])], pa.binary(32))})  # fmt: skip
    report = Report()
    check_transactions_roots(transactions, blocks, report, family=ARBITRUM_NITRO)
    assert [f.check for f in report.failures] == ([] if column is None else [column])
