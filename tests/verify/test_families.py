"""The chain family of a chain id, and what each family declares (issue 43)."""

from __future__ import annotations

import pytest

from chainframe.families import ARBITRUM_NITRO, ETHEREUM, FAMILIES, OP_STACK, POLYGON_POS, family_of


@pytest.mark.parametrize(
    ("chain_id", "family"),
    [
        (1, ETHEREUM), (11155111, ETHEREUM), (10, OP_STACK), (8453, OP_STACK), (7777777, OP_STACK), (34443, OP_STACK),
        (11155420, OP_STACK), (84532, OP_STACK), (42161, ARBITRUM_NITRO), (42170, ARBITRUM_NITRO),
        (421614, ARBITRUM_NITRO), (137, POLYGON_POS), (80002, POLYGON_POS), (31337, ETHEREUM), (None, ETHEREUM),
    ],
)  # fmt: skip
def test_a_chain_is_read_as_its_family_and_an_unknown_one_as_ethereum(chain_id: int | None, family: object) -> None:
    assert family_of(chain_id) is family


def test_no_chain_id_is_in_two_families() -> None:
    ids = [chain_id for family in FAMILIES for chain_id in family.chain_ids]
    assert len(ids) == len(set(ids))


def test_ethereum_declares_nothing_of_its_own() -> None:
    assert (ETHEREUM.transaction_types, ETHEREUM.receipt_types, ETHEREUM.unprovable) == ({}, {}, {})


def test_op_withdrawals_root_is_a_list_root_before_isthmus_only() -> None:
    assert OP_STACK.withdrawals_root(10, 1746806400) is None
    assert "Isthmus" in (OP_STACK.withdrawals_root(10, 1746806401) or "")
    assert ETHEREUM.withdrawals_root(1, 2**40) is None
