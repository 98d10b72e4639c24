"""Which family a run reads a chain as: from its id, or an override that must agree with a known id."""

from __future__ import annotations

import pytest

from chainframe._errors import InputError
from chainframe.families import ARBITRUM_NITRO, ETHEREUM, FAMILIES, OP_STACK, choose_family


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
