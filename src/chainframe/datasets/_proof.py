"""How a dataset's rows are proven against the chain, declared on the dataset (:attr:`Dataset.proof`) as a
:class:`Proof`: the engine and ``chainframe verify`` read it and never branch on which kind it is.

A proof says, as data:

- what it proves the rows against, in words (:attr:`Proof.doc`);
- the answers it reads beside the rows' own (:attr:`Proof.reads`: the datasets whose answers for the piece's blocks
  are fetched, the blocks' being the headers; a run that verifies shares them between its datasets), and what stored
  rows need besides, their own answers not being stored (:attr:`Proof.stored_reads`);
- what it proves of the answers it reads (:attr:`Proof.proves`, :attr:`Proof.proves_own`), so that another dataset
  of the run reading the very same answers does not prove them again;
- what its check reports as skipped, and why (:attr:`Proof.unprovable`);
- its check (:attr:`Proof.check`): a function given a :class:`chainframe.verify.Piece`, named by its import path;
- how ``chainframe verify DIR`` proves the dataset's stored rows offline, against the folder's own stored headers
  (:attr:`Proof.offline`, an :class:`Offline`): the datasets checked with it, those its proof reads stored beside it,
  what it proves of another group's rows and which list of each block's hashes it proves.

Why the check is named and not imported: the checks are the ``verify`` room's, which imports this room (they read
the datasets' transforms and sorts), so an import from here would run back up and make a circle. The name is
resolved on a proof's first check (:meth:`Proof.prove`), through the checking room's public names; a kind of one's
own (a test's) names a function of its own module the same way. The datasets it reads are named too, by their
catalogue names (a proof is declared in its dataset's class body, before the datasets it reads may exist).

A dataset names its kind as ``proof = Proof.RECEIPTS`` (the catalogue's kinds, one instance each, are listed on
:class:`Proof`), or declares an instance of a subclass of its own: adding a kind of proof is a subclass and its check,
and no engine or ``verify`` module changes.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple

from chainframe.datasets._registry import datasets

if TYPE_CHECKING:
    import pyarrow as pa

    from chainframe.datasets._dataset import BlockRange, Dataset


# A NamedTuple, not a frozen dataclass: every run imports it, and a dataclass costs about 1.2 ms to make (issue 43).
class Across(NamedTuple):
    """What a dataset's stored rows are checked against in another group's rows, where both are stored."""

    dataset: str
    """The other group's dataset, by catalogue name."""
    check: str
    """The function, as ``module:name``: called with keyword arguments, the two datasets' rows (by dataset name),
    ``blocks`` (the proven headers of the blocks both cover), ``report``, ``chain_id`` and ``family``."""
    name: str
    """The check's name in the report (for the blocks where the other dataset is not stored: skipped)."""
    skipped: str
    """Why it is skipped where the other dataset is not stored."""

    def run(self, **given: Any) -> None:
        """Run the check (its module imported on first use, as :meth:`Proof.prove`'s)."""
        _function(self.check)(**given)


# A NamedTuple, not a frozen dataclass: every run imports it, and a dataclass costs about 1.2 ms to make (issue 43).
class Listed(NamedTuple):
    """A list of hashes each header holds (no header field commits to it) that the dataset's rows prove."""

    check: str
    """The blocks' check (and column) that proves it."""
    column: str
    """The header column that says whether a block has such a list."""
    none: tuple[Any, ...]
    """The values of :attr:`column` of a block without one."""
    skipped: str
    """Why a block's list is not proven where the dataset's rows are not stored."""


# A NamedTuple, not a frozen dataclass: every run imports it, and a dataclass costs about 1.2 ms to make (issue 43).
class Offline(NamedTuple):
    """How ``chainframe verify DIR`` proves a dataset's stored rows offline, against the folder's own stored headers
    (:attr:`Proof.offline`; the headers' dataset is the folder's windows)."""

    check: str = "chainframe.verify:verify_tables"
    """The function, as ``module:name``, that checks a group's rows: called with keyword arguments, each dataset's
    rows by its name, ``blocks`` (the headers, or None where the folder stores none), ``report``, ``headers`` (False:
    the headers are proven already), ``chain_id``, ``family`` and ``proven`` (datasets given that are proven already
    against these headers: their own checks are not repeated)."""
    group: tuple[str, ...] = ()
    """The datasets checked together, against the headers of the blocks they all cover (the receipts' root needs
    their logs), by catalogue name, each declaring the same group; empty: the dataset alone."""
    together: tuple[str, ...] | None = None
    """The datasets its proof reads stored beside it, over the same blocks (then ``verify DIR --rpc`` needs nothing
    of the node for it but the block hashes); None: it is not proven with the others."""
    across: Across | None = None
    """What its rows are checked against in another group's rows."""
    lists: Listed | None = None
    """The list of each block's hashes its rows prove."""

    def run(self, **given: Any) -> None:
        """Check a group's rows (its module imported on first use, as :meth:`Proof.prove`'s)."""
        _function(self.check)(**given)


class Proof:
    """What proves a dataset's rows (see the module). Subclasses set the class attributes; the catalogue's kinds are
    its attributes ``Proof.HEADERS`` .. ``Proof.NATIVE_TRANSFERS``."""

    doc: ClassVar[str]
    """What the rows are proven against, in words."""
    reads: ClassVar[tuple[str, ...]] = ("blocks",)
    """The datasets (by catalogue name) whose answers for a piece's blocks it is proven against, fetched in this
    order: the blocks' are the headers."""
    stored_reads: ClassVar[tuple[str, ...]] = ()
    """Read besides for stored rows (``verify --rpc``), whose own answers an extraction has and a folder does not."""
    proves: ClassVar[tuple[str, ...]] = ("blocks",)
    """The answers among :attr:`reads` it proves to be their dataset's, when it passes."""
    proves_own: ClassVar[bool] = False
    """The rows' own answers are proven to be their dataset's too (the blocks' headers, the full blocks)."""
    unprovable: ClassVar[Mapping[str, str]] = {}
    """Checks it reports as skipped, by the check's name, each with why (the rows' columns no check proves are the
    dataset's :attr:`~chainframe.datasets.Dataset.unprovable`)."""
    uncounted: ClassVar[str] = ""
    """What ``--dry --verify`` cannot count of what it reads (it depends on the answers), in words; empty: nothing."""
    check: ClassVar[str]
    """The function that proves a piece, as ``module:name``; it is given a :class:`chainframe.verify.Piece` and adds
    its failures, skips and notes to the piece's report."""
    offline: ClassVar[Offline | None] = None
    """How a folder proves the dataset's stored rows offline (``chainframe verify DIR``); None: only against a node
    (``--rpc``)."""

    HEADERS: ClassVar[Proof]
    TRANSACTIONS: ClassVar[Proof]
    RECEIPTS: ClassVar[Proof]
    LOGS: ClassVar[Proof]
    RAW_LOGS: ClassVar[Proof]
    UNCLES: ClassVar[Proof]
    ACCOUNTS: ClassVar[Proof]
    SLOTS: ClassVar[Proof]
    STATE: ClassVar[Proof]
    DERIVED: ClassVar[Proof]
    NATIVE_TRANSFERS: ClassVar[Proof]

    def read(self, dataset: Dataset, *, stored: bool = False) -> tuple[Dataset, ...]:
        """The datasets whose answers ``dataset``'s rows are proven against (``stored``: rows read from a folder)."""
        found = datasets()
        return tuple(found[name] for name in (*self.reads, *(self.stored_reads if stored else ())))

    async def material(
        self,
        client: Any,
        dataset: Dataset,
        blocks: BlockRange,
        *,
        stored: pa.Table | None = None,
        filters: Mapping[str, Any],
        answers: Sequence[bytes] | None = None,
    ) -> dict[Dataset, list[bytes]]:
        """Fetch what ``dataset``'s rows of ``blocks`` are proven against, by the dataset whose answers they are;
        ``stored``: the stored rows (an Arrow table) when they were not extracted in this run; ``answers``: in an
        extraction, the rows' own answers, for a proof that must know what they name (never fetched twice)."""
        return {d: await d.fetch(client, blocks) for d in self.read(dataset, stored=stored is not None)}

    def prove(self, piece: Any) -> None:
        """Run the check on ``piece`` (a :class:`chainframe.verify.Piece`)."""
        _function(self.check)(piece)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


@cache
def _function(path: str) -> Callable[..., Any]:
    module, _, name = path.partition(":")
    found: Callable[..., Any] = getattr(importlib.import_module(module), name)
    return found


EMPTY_UNCLES = bytes.fromhex("1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347")
"""A header's ``sha3_uncles`` when it has no uncles: keccak(rlp([]))."""


class HeadersProof(Proof):
    doc = "the block hash: keccak of the header's fields"
    reads = ()
    proves = ()
    proves_own = True
    check = "chainframe.verify:prove_headers"
    offline = Offline(together=())


class TransactionsProof(Proof):
    doc = "the header's transactions root, and each sender's signature"
    proves_own = True
    check = "chainframe.verify:prove_transactions"
    offline = Offline(
        together=("blocks",),
        lists=Listed("transaction_hashes", "transaction_count", (0, None),
                     "no transactions stored for these blocks: their hashes are not proven"),
    )  # fmt: skip


class ReceiptsProof(Proof):
    doc = "the header's receipts root, rebuilt from the receipts and their logs"
    reads = ("blocks", "transactions")  # the receipts' sender, recipient, price paid and created address
    stored_reads = ("receipts",)  # their logs are not stored with them
    proves = ("blocks", "transactions")
    proves_own = True
    check = "chainframe.verify:prove_receipts"
    offline = Offline(
        group=("receipts", "logs"),
        together=("blocks", "transactions", "logs"),  # the root with the logs; the transaction columns
        across=Across("transactions", "chainframe.verify:check_receipts_from_transactions", "from_transactions",
                      "no transactions stored: the receipts' sender, recipient, transaction hash, type, price paid and "
                      "created address are not proven"),
    )  # fmt: skip


class LogsProof(Proof):
    doc = "the receipts root and the logs bloom, from the blocks' receipts"
    reads = ("blocks", "receipts")
    proves = ("blocks", "receipts")
    check = "chainframe.verify:prove_logs"


class RawLogsProof(LogsProof):
    """The logs themselves (not a series made of them): a folder proves them with their receipts."""

    offline = Offline(group=("receipts", "logs"), together=("blocks", "transactions", "receipts"))


class UnclesProof(Proof):
    doc = "the header's uncles hash, and each uncle's own hash"
    check = "chainframe.verify:prove_uncles"
    offline = Offline(
        together=("blocks",),
        lists=Listed("uncles", "sha3_uncles", (EMPTY_UNCLES,),
                     "no uncles stored for these blocks: their uncle hashes are not proven"),
    )  # fmt: skip


class AccountsProof(Proof):
    doc = "the header's state root, through the account's Merkle proof"
    check = "chainframe.verify:prove_accounts"
    offline = Offline(group=("account_proofs", "storage_proofs"))


class SlotsProof(Proof):
    doc = "the account's storage root, through the slot's Merkle proof"
    check = "chainframe.verify:prove_slots"
    offline = Offline(group=("account_proofs", "storage_proofs"))

    async def material(
        self,
        client: Any,
        dataset: Dataset,
        blocks: BlockRange,
        *,
        stored: pa.Table | None = None,
        filters: Mapping[str, Any],
        answers: Sequence[bytes] | None = None,
    ) -> dict[Dataset, list[bytes]]:
        """A slot's proof hangs from its account's storage hash: an extraction's own eth_getProof answers carry the
        account's proof; stored slots have their accounts' proofs (eth_getProof with no keys) fetched again, of the
        accounts as stored (a changed address fetches another account, whose storage hash the slot's proof then
        does not hang from)."""
        found = await super().material(client, dataset, blocks, filters=filters)
        if stored is not None and stored.num_rows:
            accounts = datasets()["account_proofs"]
            addresses = sorted({"0x" + bytes(a).hex() for a in stored["address"].to_pylist()})
            found[accounts] = await accounts.fetch(client, blocks, addresses=addresses)
        return found


class StateProof(Proof):
    doc = "the header's state root, through eth_getProof of the same accounts (and slots) at the same blocks"
    uncounted = "the state reads' proofs, an eth_getProof per account and block"
    check = "chainframe.verify:prove_state"

    async def material(
        self,
        client: Any,
        dataset: Dataset,
        blocks: BlockRange,
        *,
        stored: pa.Table | None = None,
        filters: Mapping[str, Any],
        answers: Sequence[bytes] | None = None,
    ) -> dict[Dataset, list[bytes]]:
        """The headers, and eth_getProof of the rows' accounts (and slots) at their blocks: the dataset's
        :meth:`~chainframe.datasets.Dataset.proof_answers`, under the dataset itself."""
        found = await super().material(client, dataset, blocks, filters=filters)
        found[dataset] = await dataset.proof_answers(client, blocks, filters)
        return found


class DerivedProof(Proof):
    doc = "the transactions root and signatures, the receipts root with the logs; the rows computed again from them"
    check = "chainframe.verify:prove_derived"

    def read(self, dataset: Dataset, *, stored: bool = False) -> tuple[Dataset, ...]:
        """In an extraction, the rows' own answers hold what they are computed from (only the headers are fetched,
        and what the dataset's fetch does not read: :attr:`~chainframe.datasets.Dataset.derived_fetched`); stored
        rows have all of it fetched again."""
        own = () if stored else dataset.fetched_from
        return (*super().read(dataset), *(d for d in dataset.derived_from if d not in own))


class NativeTransfersProof(Proof):
    doc = (
        "a transaction's own value: the transactions root, its sender's signature and its receipt's status (the "
        "receipts root); withdrawals: the withdrawals root"
    )
    reads = ("blocks", "transactions", "receipts")  # a transaction's value stands only if its receipt says success
    unprovable = {
        "internal": "movements inside execution (calls, creations, self-destructs) come from traces, which no header "
        "field commits to"
    }
    check = "chainframe.verify:prove_native_transfers"


Proof.HEADERS = HeadersProof()
Proof.TRANSACTIONS = TransactionsProof()
Proof.RECEIPTS = ReceiptsProof()
Proof.LOGS = LogsProof()
Proof.RAW_LOGS = RawLogsProof()
Proof.UNCLES = UnclesProof()
Proof.ACCOUNTS = AccountsProof()
Proof.SLOTS = SlotsProof()
Proof.STATE = StateProof()
Proof.DERIVED = DerivedProof()
Proof.NATIVE_TRANSFERS = NativeTransfersProof()
