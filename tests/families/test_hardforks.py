"""A column a family's headers stop committing to at a hardfork is declared on the family (OP's withdrawals root at
Isthmus): verify skips its check from then on only, and ``chainframe schema`` lists it with its reason."""

from __future__ import annotations

import pytest

from chainframe.cli import main
from chainframe.families import ETHEREUM, FAMILIES, OP_STACK

ISTHMUS_MAINNET = 1746806401  # OP Mainnet's and Base's Isthmus (superchain registry)


def test_op_withdrawals_root_is_declared_unprovable_from_isthmus() -> None:
    rule = OP_STACK.unprovable_from["blocks.withdrawals_root"]
    assert rule.hardfork == "isthmus"
    for chain_id in (10, 8453):
        assert OP_STACK.withdrawals_root(chain_id, ISTHMUS_MAINNET - 1) is None  # before: a list's root, checked
        assert OP_STACK.withdrawals_root(chain_id, ISTHMUS_MAINNET) == rule.why
    assert OP_STACK.withdrawals_root(31337, 0) == rule.why  # a chain the table does not date: from its genesis
    assert ETHEREUM.withdrawals_root(1, ISTHMUS_MAINNET) is None
    proven, skipped = OP_STACK.proofs(10, ISTHMUS_MAINNET - 1)
    assert "withdrawals root" in proven
    assert "blocks.withdrawals_root" not in skipped
    proven, skipped = OP_STACK.proofs(10, ISTHMUS_MAINNET)
    assert "withdrawals root" not in proven
    assert skipped["blocks.withdrawals_root"] == rule.why


def test_every_family_declares_its_hardfork_rules_by_columns_it_has() -> None:
    for family in FAMILIES:
        for column, rule in family.unprovable_from.items():
            assert column.count(".") == 1, (family, column)
            assert rule.why, (family, column)
            assert family.unprovable_columns()[column] == rule.why


def test_schema_shows_the_op_withdrawals_root_as_unprovable_with_its_reason(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "blocks"]) == 0
    out = capsys.readouterr().out.split("not provable on a chain family")[1]
    why = OP_STACK.unprovable_from["blocks.withdrawals_root"].why
    assert any(
        line.split()[:2] == ["withdrawals_root", "op-stack:"] and line.endswith(why) for line in out.splitlines()
    )
