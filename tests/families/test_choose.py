"""Which family a run reads a chain as: from its id, or an override that must agree with a known id."""

from __future__ import annotations

import pytest

from chainframe._errors import InputError
from chainframe.families import (
    ARBITRUM_NITRO,
    ETHEREUM,
    FAMILIES,
    OP_STACK,
    choose_family,
    family_by,
    family_line,
    family_named,
)


def test_a_known_chain_id_names_its_family() -> None:
    for family in FAMILIES:
        for chain_id in family.chain_ids:
            assert choose_family(chain_id) == (family, False)
            assert choose_family(chain_id, family.name) == (family, False)  # the override agreeing is taken


def test_an_unknown_chain_is_read_as_ethereum_and_said_to_be_assumed() -> None:
    assert choose_family(31337) == (ETHEREUM, True)


def test_an_override_names_the_family_of_an_unknown_chain() -> None:
    assert choose_family(31337, "arbitrum-nitro") == (ARBITRUM_NITRO, False)
    assert choose_family(31337, "ethereum") == (ETHEREUM, False)


def test_a_wrong_family_for_a_known_chain_is_refused_naming_both() -> None:
    with pytest.raises(InputError, match=r"^chain 10 \(OP Mainnet\) is op-stack, not arbitrum-nitro"):
        choose_family(10, "arbitrum-nitro")
    with pytest.raises(InputError, match=r"^chain 42161 \(Arbitrum One\) is arbitrum-nitro, not op-stack"):
        choose_family(42161, OP_STACK.name)


def test_an_override_naming_no_family_is_refused_with_the_families() -> None:
    with pytest.raises(InputError, match="'arbitrum' names no chain family; the families are: ethereum, op-stack"):
        choose_family(10, "arbitrum")


def test_the_refusal_says_it_came_before_any_block_was_asked_for() -> None:
    with pytest.raises(InputError, match=r"drop --chain-family or give op-stack \(refused after eth_chainId, before"):
        choose_family(8453, "ethereum")


def test_a_family_is_named_as_the_flag_names_it() -> None:
    assert [family_named(f.name) for f in FAMILIES] == list(FAMILIES)
    with pytest.raises(InputError, match="'OP' names no chain family"):
        family_named("OP")  # names are matched exactly, as the flag's help lists them


def test_how_the_family_was_chosen_is_said_in_one_line() -> None:
    assert family_by(True, None) == "assumed"
    assert family_by(False, None) == "chain id"
    assert family_by(False, "op-stack") == "user"
    assert family_line("ethereum", "assumed", 31337) == (
        "chain family ethereum, assumed: no family knows chain id 31337 (--chain-family names one)"
    )
    assert family_line("op-stack", "user", 31337) == "chain family op-stack, chosen with --chain-family"
    assert family_line("op-stack", "chain id", 8453) == "chain family op-stack, by the chain id (Base)"
