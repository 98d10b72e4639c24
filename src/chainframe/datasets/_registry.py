"""The catalogue: every dataset by name, one line each, read without importing any dataset.

Each line names the module and the instance that declare the dataset (everything else about it is on its class,
:class:`~chainframe.datasets.Dataset`), and whether its extraction can run in a process without numpy: the
``chainframe`` command decides that before pyarrow loads (:mod:`chainframe.cli._process`), so it cannot ask the class.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from chainframe.datasets._dataset import Dataset


class Entry(NamedTuple):
    module: str
    instance: str
    numpy_free: bool
    """Extracting it never needs numpy (the decoders do: token transfers are decoded with them)."""


REGISTRY: dict[str, Entry] = {
    # the chain's own objects
    "blocks": Entry("_blocks", "BLOCKS", numpy_free=True),
    "transactions": Entry("_blocks", "TRANSACTIONS", numpy_free=True),
    "receipts": Entry("_receipts", "RECEIPTS", numpy_free=True),
    "logs": Entry("_logs", "LOGS", numpy_free=True),
    "uncles": Entry("_uncles", "UNCLES", numpy_free=True),
    # what the blocks' execution did (block traces), and what their rows say (derived)
    "traces": Entry("_block_traces", "TRACES", numpy_free=False),
    "native_transfers": Entry("_block_traces", "NATIVE_TRANSFERS", numpy_free=False),
    "contracts": Entry("_block_traces", "CONTRACTS", numpy_free=False),
    "address_appearances": Entry("_derived", "ADDRESS_APPEARANCES", numpy_free=False),
    "four_byte_counts": Entry("_derived", "FOUR_BYTE_COUNTS", numpy_free=True),
    # tokens
    "erc20_transfers": Entry("_transfers", "ERC20_TRANSFERS", numpy_free=False),
    "erc721_transfers": Entry("_transfers", "ERC721_TRANSFERS", numpy_free=False),
    "erc1155_transfers": Entry("_transfers", "ERC1155_TRANSFERS", numpy_free=False),
    "erc20_balances": Entry("_erc20", "ERC20_BALANCES", numpy_free=False),
    "erc20_supplies": Entry("_erc20", "ERC20_SUPPLIES", numpy_free=False),
    "erc20_metadata": Entry("_erc20", "ERC20_METADATA", numpy_free=False),
    # state at each block, and its proofs
    "balances": Entry("_state", "BALANCES", numpy_free=True),
    "nonces": Entry("_state", "NONCES", numpy_free=True),
    "codes": Entry("_state", "CODES", numpy_free=True),
    "slots": Entry("_state", "SLOTS", numpy_free=True),
    "account_proofs": Entry("_proofs", "ACCOUNT_PROOFS", numpy_free=False),
    "storage_proofs": Entry("_proofs", "STORAGE_PROOFS", numpy_free=False),
    # how each transaction changed state
    "balance_diffs": Entry("_state_diffs", "BALANCE_DIFFS", numpy_free=True),
    "nonce_diffs": Entry("_state_diffs", "NONCE_DIFFS", numpy_free=True),
    "code_diffs": Entry("_state_diffs", "CODE_DIFFS", numpy_free=True),
    "storage_diffs": Entry("_state_diffs", "STORAGE_DIFFS", numpy_free=True),
    # calls made at each block
    "eth_calls": Entry("_calls", "ETH_CALLS", numpy_free=True),
    "call_traces": Entry("_traces", "CALL_TRACES", numpy_free=False),
    "prestate_accounts": Entry("_traces", "PRESTATE_ACCOUNTS", numpy_free=False),
    "prestate_storage": Entry("_traces", "PRESTATE_STORAGE", numpy_free=False),
}

_loaded: dict[str, Dataset] = {}


def datasets() -> dict[str, Dataset]:
    """Every dataset by name: the catalogue's, in its order (their modules imported on first use), then any added
    with :func:`register`."""
    if not _loaded:
        import importlib

        modules = {e.module: importlib.import_module(f"chainframe.datasets.{e.module}") for e in REGISTRY.values()}
        _loaded.update({name: getattr(modules[e.module], e.instance) for name, e in REGISTRY.items()})
    return _loaded


def registered() -> dict[str, Dataset]:
    """The datasets added with :func:`register`, by name: none unless something did (a dataset's module is then loaded
    already). Importing no dataset of the catalogue: ``chainframe schema`` describes those without their modules."""
    return {name: dataset for name, dataset in _loaded.items() if name not in REGISTRY}


def register(dataset: Dataset) -> None:
    """Add a dataset of one's own (or a test's) at run time: from then on it is a dataset like the catalogue's."""
    found = datasets()
    if dataset.name in found and found[dataset.name] is not dataset:
        raise ValueError(f"a dataset named {dataset.name!r} is registered already")
    found[dataset.name] = dataset


def unregister(name: str) -> None:
    """Remove a dataset added with :func:`register`."""
    if name in REGISTRY:
        raise ValueError(f"{name!r} is in the catalogue: it cannot be removed")
    datasets().pop(name, None)
