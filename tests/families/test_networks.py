"""Every network ``--network`` names is read as the family its blocks are (issue 43): none falls to Ethereum's rules
unless it is Ethereum's shape (Linea, declared so) or is declared as having no family (with why)."""

from __future__ import annotations

import pytest

from chainframe.families import ETHEREUM, FAMILIES, OP_STACK, UNDECLARED, choose_family, family_line, family_of
from chainframe.rpc import INFURA_NETWORKS

# Each network's chain id, from chainlist (github.com/ethereum-lists/chains, ``_data/chains/eip155-<id>.json``), and
# the family it is: one of FAMILIES' names, or None where no family declares it (UNDECLARED says why).
NETWORKS: dict[str, tuple[int, str | None]] = {
    "mainnet": (1, "ethereum"), "sepolia": (11155111, "ethereum"), "hoodi": (560048, "ethereum"),
    "linea-mainnet": (59144, "ethereum"), "linea-sepolia": (59141, "ethereum"),
    "optimism-mainnet": (10, "op-stack"), "optimism-sepolia": (11155420, "op-stack"),
    "base-mainnet": (8453, "op-stack"), "base-sepolia": (84532, "op-stack"),
    "blast-mainnet": (81457, "op-stack"), "blast-sepolia": (168587773, "op-stack"),
    "celo-mainnet": (42220, "op-stack"), "celo-sepolia": (11142220, "op-stack"),
    "opbnb-mainnet": (204, "op-stack"), "opbnb-testnet": (5611, "op-stack"),
    "unichain-mainnet": (130, "op-stack"), "unichain-sepolia": (1301, "op-stack"),
    "swellchain-mainnet": (1923, "op-stack"), "swellchain-testnet": (1924, "op-stack"),
    "hemi-mainnet": (43111, "op-stack"), "hemi-testnet": (743111, "op-stack"),
    "arbitrum-mainnet": (42161, "arbitrum-nitro"), "arbitrum-sepolia": (421614, "arbitrum-nitro"),
    "polygon-mainnet": (137, "polygon-pos"), "polygon-amoy": (80002, "polygon-pos"),
    "bsc-mainnet": (56, "bsc"), "bsc-testnet": (97, "bsc"),
    "avalanche-mainnet": (43114, "avalanche"), "avalanche-fuji": (43113, "avalanche"),
    "zksync-mainnet": (324, None), "zksync-sepolia": (300, None),
    "sei-mainnet": (1329, None), "sei-testnet": (1328, None),
    "palm-mainnet": (11297108109, None), "palm-testnet": (11297108099, None),
    "monad-mainnet": (143, None), "monad-testnet": (10143, None),
    "scroll-mainnet": (534352, "scroll"), "scroll-sepolia": (534351, "scroll"),
    "mantle-mainnet": (5000, "mantle"), "mantle-sepolia": (5003, "mantle"),
}  # fmt: skip
NOT_EVM = {"starknet-mainnet", "starknet-sepolia"}  # Starknet answers starknet_* calls: no eth_chainId, no EVM block


def test_every_named_network_is_classified() -> None:
    assert set(NETWORKS) | NOT_EVM == set(INFURA_NETWORKS)


@pytest.mark.parametrize("network", sorted(NETWORKS))
def test_a_named_network_is_read_as_its_family(network: str) -> None:
    chain_id, name = NETWORKS[network]
    family, assumed = choose_family(chain_id)
    if name is None:
        assert (family, assumed) == (ETHEREUM, True)
        assert chain_id in UNDECLARED
        assert UNDECLARED[chain_id] in family_line(family.name, "assumed", chain_id)
    else:
        assert (family.name, assumed) == (name, False)
        assert family_of(chain_id) is family


def test_no_undeclared_chain_is_in_a_family() -> None:
    declared = {chain_id for family in FAMILIES for chain_id in family.chain_ids}
    assert not declared & set(UNDECLARED)


@pytest.mark.parametrize(
    ("chain_id", "canyon", "isthmus"),
    [(204, 1718870400, None), (5611, 1715753400, None), (42220, 0, 1752073200), (130, 1704992401, 1746806401)],
)
def test_an_added_op_chain_encodes_deposit_receipts_by_its_own_hardfork_times(
    chain_id: int, canyon: int, isthmus: int | None
) -> None:
    """opBNB took Canyon months after OP Mainnet and has no Isthmus; Celo took Isthmus with Holocene in July 2025."""
    needs = OP_STACK.receipt_types[0x7E].needs
    if canyon:
        assert needs(canyon - 1, chain_id) == ("deposit_nonce",)
    assert needs(canyon, chain_id) == ("deposit_nonce", "deposit_receipt_version")
    if isthmus is None:
        assert OP_STACK.withdrawals_root(chain_id, 2**40) is None
    else:
        assert OP_STACK.withdrawals_root(chain_id, isthmus - 1) is None
        assert OP_STACK.withdrawals_root(chain_id, isthmus) is not None
