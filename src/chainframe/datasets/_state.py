"""State reads at blocks: the balance, nonce, code or storage slots of given accounts (eth_getBalance,
eth_getTransactionCount, eth_getCode, eth_getStorageAt), one row per block, account (and slot).

Rows are read at every block of the range, or with ``every=N`` at the blocks that are multiples of N: block numbers,
not counted from where a range starts, so a chunk, an extension and a repair of the same blocks read the same ones
whatever range a run was given. A block off the step has no row.

Balances, codes and nonces are one eth_call per block whose code reads every account (:class:`ReadByCall`; nonces
through the address a CREATE by each account would make, :class:`Nonces`), and slots one eth_call per block and
account reading every key (:class:`Slots`); batched (:meth:`AsyncClient.batch_bytes`: the answers as received).
The fetch step writes what it asked first (blocks, accounts, slots, in call order): ``transform`` stays a pure
function of the bytes it is given, each result matched to its call by the batch ids.

Proof (:attr:`Proof.STATE`): eth_getProof of the same accounts (and slots) at the same blocks, fetched for the proof,
proves balance, nonce, code hash and slot values against the header's state root; a code against its code hash.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import pyarrow as pa

from chainframe import _kernels as pc
from chainframe.datasets._columns import U256
from chainframe.datasets._context import fetch_with_context
from chainframe.datasets._convert import DecodeError
from chainframe.datasets._dataset import BlockRange, Dataset, RowChecks, build
from chainframe.datasets._envelope import batch_results
from chainframe.datasets._inputs import ADDRESSES, EVERY, STORAGE_KEYS, Input
from chainframe.datasets._proof import Proof
from chainframe.rpc import RPCError, StateUnavailable, TransientError

if TYPE_CHECKING:
    import polars as pl

    from chainframe.rpc import Pacing
else:
    from chainframe._lazy import polars as pl


def asked(blocks: BlockRange, filters: Mapping[str, Any]) -> dict[str, list[Any]]:
    """What a piece reads, in call order: its blocks on the step, the accounts (each once), the slots."""
    every = int(filters.get("every", 1))
    first = -(-blocks.start // every) * every
    return {
        "blocks": list(range(first, blocks.end + 1, every)),
        "addresses": list(dict.fromkeys(filters.get("addresses") or ())),
        "keys": list(dict.fromkeys(filters.get("storage_keys") or ())),
    }


class StateRead(Dataset):
    """A state read at blocks: a row per block and account (and slot, for ``keyed`` ones), by default one call of
    :attr:`method` per block and account."""

    result: ClassVar[str]
    """The column the call's result goes to."""
    keyed: ClassVar[bool] = False
    """A row per storage slot too (``storage_keys``)."""
    reads_state = True
    chunk_size = 1000
    inputs: ClassVar[tuple[Input, ...]] = (ADDRESSES, EVERY)
    needs = frozenset({"addresses"})
    per_block = "addresses"
    row_checks = RowChecks(keys=("block_number", "address"))
    proof = Proof.STATE

    def calls(self, blocks: int, filters: Mapping[str, Any]) -> int | None:
        on_step = -(-blocks // int(filters.get("every", 1)))
        return on_step * len(filters["addresses"])

    def _calls(self, plan: Mapping[str, list[Any]]) -> list[tuple[str, list[Any]]]:
        return [(self.method, [a, hex(n)]) for n in plan["blocks"] for a in plan["addresses"]]

    async def fetch(self, client: Any, blocks: BlockRange, **filters: Any) -> list[bytes]:
        plan = asked(blocks, filters)
        calls = self._calls(plan)
        return [json.dumps(plan).encode(), *(await client.batch_bytes(calls) if calls else [])]

    async def proof_answers(self, client: Any, blocks: BlockRange, filters: Mapping[str, Any]) -> list[bytes]:
        plan = asked(blocks, filters)
        keys = plan["keys"] if self.keyed else []
        calls = [("eth_getProof", [a, keys, hex(n)]) for n in plan["blocks"] for a in plan["addresses"]]
        return [
            await fetch_with_context(client, calls, [{"block": n} for n in plan["blocks"] for _ in plan["addresses"]])
        ]

    def frame(self, bodies: Sequence[bytes]) -> pl.DataFrame:
        """One row per block, account (and key) as asked, with its ``result`` as text."""
        plan = json.loads(bodies[0])
        frame = pl.DataFrame({"block": pl.Series(plan["blocks"], dtype=pl.UInt64())})
        frame = frame.join(pl.DataFrame({"address": pl.Series(plan["addresses"], dtype=pl.String())}), how="cross")
        if self.keyed:
            frame = frame.join(pl.DataFrame({"key": pl.Series(plan["keys"], dtype=pl.String())}), how="cross")
        results = self.results(plan, [batch_results(body, pl.String()) for body in bodies[1:]])
        if results.len() != frame.height:
            raise DecodeError(f"{self.method}: {results.len()} results for {frame.height} rows")
        return frame.with_columns(results.alias("result"))

    def results(self, plan: Mapping[str, Any], answers: list[pl.Series]) -> pl.Series:
        """The rows' results, in row order, from the calls' results (one a row here)."""
        results = pl.concat(answers) if answers else pl.Series(dtype=pl.String())
        if results.null_count():
            raise DecodeError(f"{self.method}: a null result (the node answered nothing for a block it has)")
        return results

    def transform(self, bodies: Sequence[bytes], *, chain_id: int, u256: U256 = "decimal") -> pa.Table:
        frame = self.frame(bodies)
        sources = {"address": "address", self.result: "result", **({"storage_key": "key"} if self.keyed else {})}
        extra = {"block_number": frame["block"].to_arrow()}
        return build(frame, sources, self.columns, chain_id=chain_id, u256=u256, extra=extra)


ACCOUNTS_PER_CALL = 256
"""Accounts one reading eth_call reads. Its code is 25 (balances) or 53 bytes (codes' hashes) an account and its
answer 32, kept as the created account's code (200 gas a byte). It asks for 10,000 or 20,000 gas an account (a
balance takes about 9,400, the hash of a 24 KB code about 17,000) and 100,000 more: at most 5.2M, below a block's
gas limit and EIP-7825's cap of 2^24 a transaction, and the code below EIP-3860's 49,152 bytes."""


def balance_reader(addresses: Sequence[str]) -> list[Any]:
    """An eth_call that returns the balance of each of ``addresses`` as a 32-byte word, in order: for each, PUSH20
    address, BALANCE (what eth_getBalance reads)."""
    return [_reader(addresses, lambda address: b"\x73" + address + b"\x31", gas=10_000)]


def code_hash_reader(addresses: Sequence[str]) -> list[Any]:
    """An eth_call that returns the keccak of each of ``addresses``' code as a 32-byte word, in order: for each,
    EXTCODESIZE, EXTCODECOPY of the code past the answer's words, KECCAK256 of it. These opcodes are in every fork
    since Frontier; EXTCODEHASH is not, and it is 0 for an account that does not exist."""
    past = (32 * len(addresses)).to_bytes(2, "big")

    def hashed(address: bytes) -> bytes:
        # PUSH20 a EXTCODESIZE [size]; DUP1, PUSH1 0, PUSH2 past, PUSH20 a [size size 0 past a];
        # EXTCODECOPY(a, past, 0, size) [size]; PUSH2 past, KECCAK256(past, size) [hash]
        size = b"\x73" + address + b"\x3b"
        return size + b"\x80\x60\x00\x61" + past + b"\x73" + address + b"\x3c\x61" + past + b"\x20"

    return [_reader(addresses, hashed, gas=20_000)]


def _reader(addresses: Sequence[str], word: Callable[[bytes], bytes], *, gas: int) -> dict[str, str]:
    """Creation code (no ``to``: every node serves it, without a state override) that leaves ``word(address)`` of
    each address on the stack and stores it at the address's 32-byte word (PUSH2 offset, MSTORE), then returns the
    words. ``gas`` an address is more than it takes. The gas price is 0, so no node charges the sender's balance for
    the call (one of the accounts may be its sender: the zero address)."""
    code = bytearray()
    for i, address in enumerate(addresses):
        code += word(bytes.fromhex(address[2:])) + b"\x61" + (32 * i).to_bytes(2, "big") + b"\x52"
    code += b"\x61" + (32 * len(addresses)).to_bytes(2, "big") + b"\x60\x00\xf3"
    return {"data": "0x" + code.hex(), "gas": hex(100_000 + gas * len(addresses)), "gasPrice": "0x0"}


def reader_words(
    method: str, plan: Mapping[str, Any], answers: list[pl.Series], per_call: int = ACCOUNTS_PER_CALL
) -> pl.Series:
    """The readers' answers (a call per block and group of ``per_call`` accounts) split into a word a row, in row
    order (block, then account), as 64 lower-case hex digits; anything but exactly a 32-byte word an account is
    refused."""
    sizes = [len(group) for group in _groups(plan["addresses"], per_call)] * len(plan["blocks"])
    return words(method, answers, pl.Series(sizes, dtype=pl.UInt32()))


def words(method: str, answers: list[pl.Series], sizes: pl.Series) -> pl.Series:
    """Calls' answers split into their 32-byte words (``sizes`` of them each, in order), as 64 lower-case hex digits:
    an answer of any other length, not hex, or null is refused."""
    calls = pl.concat(answers) if answers else pl.Series(dtype=pl.String())
    if calls.len() != sizes.len():
        raise DecodeError(f"{method}: {calls.len()} results for {sizes.len()} calls")
    if calls.null_count() or not (calls.str.len_bytes() == sizes * 64 + 2).all():
        raise DecodeError(f"{method}: a result is not the 32-byte words its call asked for")
    found = calls.str.slice(2).str.extract_all("[0-9a-fA-F]{64}")
    if not (found.list.len() == sizes).all():
        raise DecodeError(f"{method}: a result is not hex")
    return found.explode().str.to_lowercase()


def _groups(addresses: Sequence[str], size: int = ACCOUNTS_PER_CALL) -> list[Sequence[str]]:
    return [addresses[i : i + size] for i in range(0, len(addresses), size)]


class ReadByCall(StateRead):
    """A state read done a block at a time: one eth_call per block (and group of up to :data:`ACCOUNTS_PER_CALL`
    accounts) whose code reads what the per-account method would, for every account. A node pays most of a state
    read in finding the block's state, once a call: on the benchmark chain's anvil, blocks 1500-2000 and 8 accounts,
    the balances' call took 1.9 CPU-s of anvil where eth_getBalance took 10.3-12.2 (the values equal), and a
    provider bills one call, not 8."""

    method = "eth_call"
    reader: ClassVar[Callable[[Sequence[str]], list[Any]]]
    """The call's parameters but its block, for a group of accounts."""
    per_call: ClassVar[int] = ACCOUNTS_PER_CALL
    """Accounts one call reads."""

    def calls(self, blocks: int, filters: Mapping[str, Any]) -> int | None:
        on_step = -(-blocks // int(filters.get("every", 1)))
        return on_step * -(-len(filters["addresses"]) // self.per_call)

    def _calls(self, plan: Mapping[str, list[Any]]) -> list[tuple[str, list[Any]]]:
        readers = [type(self).reader(group) for group in _groups(plan["addresses"], self.per_call)]
        return [(self.method, [reader[0], hex(n), *reader[1:]]) for n in plan["blocks"] for reader in readers]


class Balances(ReadByCall):
    name = "balances"
    doc = "Account balances (wei) at blocks: BALANCE of each address, one eth_call per block."
    columns = ("chain_id", "block_number", "address", "balance")
    sort = ("block_number", "address")
    fetched_with = (
        f"eth_call per block (or every N-th) of code that reads BALANCE of up to {ACCOUNTS_PER_CALL} addresses, batched"
    )
    result = "balance"
    reader = balance_reader

    def results(self, plan: Mapping[str, Any], answers: list[pl.Series]) -> pl.Series:
        """Each account's word as a quantity (``0x`` and no leading zero)."""
        digits = reader_words(self.method, plan, answers).str.strip_chars_start("0")
        return pl.select(pl.when(digits == "").then(pl.lit("0x0")).otherwise("0x" + digits)).to_series()


NONCE_PROBE = "0x" + bytes.fromhex("60008080f060005260206000f3").hex()
"""Code put at each account read (a state override): CREATE(0, 0, 0), an empty contract, and return its address.
A CREATE's address is keccak(rlp([creator, creator's nonce]))[12:], so the answer fixes the account's nonce: what
eth_getTransactionCount reads."""
NONCES_PER_CALL = 64
"""Accounts one nonce reader reads: a CALL and a CREATE each, about 36,000 gas, 50,000 asked (3.3M a call)."""
NONCE_SEARCH = 1024
"""Nonces tried past an account's last known one before it is read by eth_getTransactionCount instead."""


def nonce_reader(addresses: Sequence[str]) -> list[Any]:
    """An eth_call that CALLs each of ``addresses``, at which a state override puts :data:`NONCE_PROBE`, and returns
    each probe's answer as a word, in order (zero where the call failed). Its sender is none of the accounts: a call's
    sender has its nonce raised before the code runs."""
    senders = (f"0x{0x5107 + i:040x}" for i in range(len(addresses) + 1))
    sender = next(s for s in senders if s not in set(addresses))
    past = (32 * len(addresses)).to_bytes(2, "big")

    def probed(address: bytes) -> bytes:
        # mem[past] = 0; PUSH1 32 PUSH2 past PUSH1 0 PUSH1 0 PUSH1 0 PUSH20 a GAS CALL [ok]; MLOAD(past) * ok
        cleared = b"\x60\x00\x61" + past + b"\x52"
        return (
            cleared
            + b"\x60\x20\x61"
            + past
            + b"\x60\x00\x60\x00\x60\x00\x73"
            + address
            + b"\x5a\xf1\x61"
            + past
            + b"\x51\x02"
        )

    call = {**_reader(addresses, probed, gas=50_000), "from": sender}
    return [call, {address: {"code": NONCE_PROBE} for address in addresses}]


def _created(address: bytes, nonce: int) -> bytes:
    """The address a CREATE by ``address`` at ``nonce`` makes (20 bytes)."""
    from chainframe._keccak import keccak256  # deferred: the keccak extension loads when keys are hashed

    count = b"\x80" if nonce == 0 else bytes([nonce]) if nonce < 0x80 else _length(nonce)
    return keccak256(bytes([0xC0 + 21 + len(count)]) + b"\x94" + address + count)[12:]


def _length(nonce: int) -> bytes:
    raw = nonce.to_bytes((nonce.bit_length() + 7) // 8, "big")
    return bytes([0x80 + len(raw)]) + raw


def _searched(address: bytes, word: str, start: int) -> int | None:
    """The nonce whose CREATE address ``word`` holds, tried from ``start`` up (and then from 0 to ``start``, as a
    contract destroyed and made again starts over), or None."""
    if not word.startswith("0" * 24) or word == "0" * 64:
        return None
    made = bytes.fromhex(word[24:])
    for tried in (range(start, start + NONCE_SEARCH), range(min(start, NONCE_SEARCH))):
        for nonce in tried:
            if _created(address, nonce) == made:
                return nonce
    return None


class Nonces(ReadByCall):
    """Nonces are read a block at a time: one eth_call per block (and group of :data:`NONCES_PER_CALL` accounts)
    whose state override puts :data:`NONCE_PROBE` at each account, so that each answers the address its next CREATE
    would make, which fixes its nonce. The nonce is found by trying them from the account's last one. A row where
    none fits (the override not applied, a precompile at the address, a nonce that jumped far) is read by
    eth_getTransactionCount: first the earliest such row of each account (it gives the rest their start), then any
    left."""

    name = "nonces"
    doc = "Account nonces (transactions sent, or contracts created by a contract) at blocks, per address."
    columns = ("chain_id", "block_number", "address", "nonce")
    sort = ("block_number", "address")
    fetched_with = (
        f"eth_call per block (or every N-th) with a state override putting code that CREATEs at up to "
        f"{NONCES_PER_CALL} addresses (the created address fixes the nonce); eth_getTransactionCount where it does "
        "not; batched"
    )
    result = "nonce"
    reader = nonce_reader
    per_call = NONCES_PER_CALL

    async def fetch(self, client: Any, blocks: BlockRange, **filters: Any) -> list[bytes]:
        plan = asked(blocks, filters)
        calls, answers = self._calls(plan), list[bytes]()
        try:  # the first call alone: a node that refuses it, or that did not put the probes, has every row counted
            answers = await client.batch_bytes(calls[:1]) if calls else []
            if answers and _unprobed(answers[0], len(_groups(plan["addresses"], self.per_call)[0])):
                answers = []
            answers += await client.batch_bytes(calls[1:]) if answers and calls[1:] else []
        except (StateUnavailable, TransientError):
            raise
        except RPCError:
            answers = []
        rows = len(plan["blocks"]) * len(plan["addresses"])
        if answers:
            words = reader_words(self.method, plan, [batch_results(b, pl.String()) for b in answers], self.per_call)
            seen = words.to_list()
        else:
            seen = ["0" * 64] * rows
        counted: dict[int, int] = {}  # row -> eth_getTransactionCount's answer
        found, asked_at, read = _nonces(plan, seen, counted), [], []
        width = len(plan["addresses"])
        for earliest in (True, False):  # the earliest row missed of each account (the rest start from it), then any
            missed = [row for row, nonce in enumerate(found) if nonce is None and row not in counted]
            if earliest:
                missed = sorted({row % width: row for row in reversed(missed)}.values())
            if not missed:
                break
            at = [[plan["addresses"][row % width], plan["blocks"][row // width]] for row in missed]
            answered = await client.batch_bytes([("eth_getTransactionCount", [a, hex(n)]) for a, n in at])
            values = pl.concat([batch_results(body, pl.String()) for body in answered]).to_list()
            if len(values) != len(at) or not all(isinstance(v, str) and v.startswith("0x") for v in values):
                raise DecodeError(f"eth_getTransactionCount: {len(values)} counts for {len(at)} calls, or not hex")
            counted.update(zip(missed, (int(v, 16) for v in values), strict=True))
            asked_at += at
            read += answered
            found = _nonces(plan, seen, counted)
        written = {**plan, "answers": len(answers), "nonces": found, "counted_at": asked_at}
        return [json.dumps(written).encode(), *answers, *read]

    def results(self, plan: Mapping[str, Any], answers: list[pl.Series]) -> pl.Series:
        """Each row's nonce as a quantity: where the plan names one, its CREATE address must be the row's word;
        elsewhere eth_getTransactionCount's answer for the row, in the order asked."""
        split = plan["answers"]
        width, line = len(plan["addresses"]), {b: i for i, b in enumerate(plan["blocks"])}
        rows = len(plan["blocks"]) * width
        words = (
            reader_words(self.method, plan, answers[:split], self.per_call).to_list() if split else ["0" * 64] * rows
        )
        counts = pl.concat(answers[split:]).to_list() if answers[split:] else []
        if len(counts) != len(plan["counted_at"]) or len(plan["nonces"]) != rows:
            raise DecodeError(f"{self.method}: {len(counts)} counts for {len(plan['counted_at'])} calls")
        column = {a: i for i, a in enumerate(plan["addresses"])}
        nonces: list[str | None] = [None if n is None else hex(n) for n in plan["nonces"]]
        for row, nonce in enumerate(plan["nonces"]):
            address = bytes.fromhex(plan["addresses"][row % width][2:])
            if nonce is not None and _created(address, nonce).hex() != words[row][24:]:
                raise DecodeError(f"{self.method}: the nonce reader's answer is not the address of a CREATE at {nonce}")
        for (address, block), count in zip(plan["counted_at"], counts, strict=True):
            row = line[block] * width + column[address]
            if nonces[row] is None:
                nonces[row] = count
        if None in nonces:
            raise DecodeError("eth_getTransactionCount: a null result (the node answered nothing for a block it has)")
        return pl.Series(nonces, dtype=pl.String())


def _unprobed(answer: bytes, accounts: int) -> bool:
    """Whether a nonce reader's answer is all zero words: no probe answered (a probe answers the address its CREATE
    made, never zero but where that CREATE failed), so the node did not apply the state override."""
    read = words("eth_call", [batch_results(answer, pl.String())], pl.Series([accounts], dtype=pl.UInt32()))
    return bool((read == "0" * 64).all())


def _nonces(plan: Mapping[str, Any], words: list[str], known: dict[int, int]) -> list[int | None]:
    """Each row's nonce, found from its reader word by trying nonces from the account's last row (its known count
    where eth_getTransactionCount read it), or None. After a row none fits, an account's rows are not tried until a
    known count: they start from a nonce not known."""
    width, nonces = len(plan["addresses"]), list[int | None]()
    addresses = [bytes.fromhex(a[2:]) for a in plan["addresses"]]
    last: list[int | None] = [0] * width
    for row, word in enumerate(words):
        account = row % width
        if row in known:
            last[account] = known[row]
            nonces.append(None)
            continue
        start = last[account]
        nonce = None if start is None else _searched(addresses[account], word, start)
        last[account] = nonce
        nonces.append(nonce)
    return nonces


EMPTY_CODE_HASH = "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"
"""keccak of no code: an account without code (or that does not exist)."""
DESIGNATION_HASH = "eadcdba66a79ab5dce91622d1d75c8cff5cff0b96944c3bf1072cd08ce018329"
"""keccak of 0xef01: what EXTCODECOPY gives of a delegated account, whatever it delegates to, on a node that follows
an EIP-7702 text where the EXTCODE* opcodes see 0xef01 alone (anvil copies the whole 23-byte designation)."""


class Codes(ReadByCall):
    """Codes are read as their hashes, one eth_call per block (:func:`code_hash_reader`), and each account's code
    once for each hash it has in a piece, by eth_getCode at the first block with it: an account's code is the same
    at most of the blocks read. A delegated account (EIP-7702), whose code a node may hash as its designation's
    first two bytes alone, has its code read at every block. Each code read is checked against its hash."""

    name = "codes"
    doc = "Account code (what eth_getCode answers) and its keccak hash at blocks, per address (empty for an EOA)."
    columns = ("chain_id", "block_number", "address", "code_hash", "code")
    sort = ("block_number", "address")
    fetched_with = (
        f"eth_call per block (or every N-th) of code that hashes the code of up to {ACCOUNTS_PER_CALL} addresses; "
        "eth_getCode of each account at the first block of each hash (at every block for a delegated account), batched"
    )
    result = "code"
    reader = code_hash_reader

    def other_calls(self, blocks: int, filters: Mapping[str, Any], pacing: Pacing | None = None) -> dict[str, int]:
        """An eth_getCode an account a chunk: an account's code changes seldom (a delegated one's is read at every
        block, which this does not foresee)."""
        return {"eth_getCode": len(filters["addresses"]) * -(-blocks // self.chunk_size)}

    async def fetch(self, client: Any, blocks: BlockRange, **filters: Any) -> list[bytes]:
        plan = asked(blocks, filters)
        calls = self._calls(plan)
        hashes = await client.batch_bytes(calls) if calls else []
        words = reader_words(self.method, plan, [batch_results(body, pl.String()) for body in hashes]).to_list()
        width, seen, read_at = len(plan["addresses"]), set(), []  # the first block of each account's hash
        for row, word in enumerate(words):
            address, block = plan["addresses"][row % width], plan["blocks"][row // width]
            if word != EMPTY_CODE_HASH and (word == DESIGNATION_HASH or (address, word) not in seen):
                seen.add((address, word))
                read_at.append([address, block])
        codes = await client.batch_bytes([("eth_getCode", [a, hex(n)]) for a, n in read_at]) if read_at else []
        written = {**plan, "hash_answers": len(hashes), "codes_at": read_at}
        return [json.dumps(written).encode(), *hashes, *codes]

    def results(self, plan: Mapping[str, Any], answers: list[pl.Series]) -> pl.Series:
        """Each row's code as hex: none where its hash is no code's, else the code read for the account and hash
        (for a delegated account, at the row's block), checked to hash to it."""
        from chainframe._keccak import keccak256  # deferred: the keccak extension loads when keys are hashed

        split = plan["hash_answers"]
        words = reader_words(self.method, plan, answers[:split]).to_list()
        codes = pl.concat(answers[split:]).to_list() if answers[split:] else []
        if len(codes) != len(plan["codes_at"]) or None in codes:
            raise DecodeError(f"eth_getCode: {len(codes)} codes for {len(plan['codes_at'])} calls, or a null")
        width = len(plan["addresses"])
        column = {address: i for i, address in enumerate(plan["addresses"])}
        line = {block: i for i, block in enumerate(plan["blocks"])}
        by_hash: dict[tuple[str, str], str] = {}
        by_block: dict[tuple[str, int], str] = {}
        for (address, block), code in zip(plan["codes_at"], codes, strict=True):
            word = words[line[block] * width + column[address]]
            raw = bytes.fromhex(code[2:]) if isinstance(code, str) and code.startswith("0x") else None
            if raw is None:
                raise DecodeError(f"eth_getCode: not hex: {str(code)[:40]!r} (block {block})")
            if word == DESIGNATION_HASH:
                if len(raw) != 23 or raw[:3] != b"\xef\x01\x00":
                    raise DecodeError(f"eth_getCode: {address} at block {block} is not a delegation designation")
                by_block[(address, block)] = code
            elif keccak256(raw).hex() != word:
                raise DecodeError(f"eth_getCode: {address}'s code at block {block} does not hash to what the block's"
                                  " eth_call read")  # fmt: skip
            else:
                by_hash[(address, word)] = code
        rows = []
        for row, word in enumerate(words):
            address, block = plan["addresses"][row % width], plan["blocks"][row // width]
            code = "0x" if word == EMPTY_CODE_HASH else by_block.get((address, block), by_hash.get((address, word)))
            if code is None:
                raise DecodeError(f"eth_getCode: no code read for {address}'s hash at block {block}")
            rows.append(code)
        return pl.Series(rows, dtype=pl.String())

    def transform(self, bodies: Sequence[bytes], *, chain_id: int, u256: U256 = "decimal") -> pa.Table:
        from chainframe._keccak import keccak256  # deferred: the keccak extension loads when keys are hashed

        table = super().transform(bodies, chain_id=chain_id, u256=u256)
        # An account's code is the same at most of the blocks read: each distinct one is hashed once.
        codes = pl.Series("code", table["code"].combine_chunks(), dtype=pl.Binary())
        distinct = codes.unique()
        hashes = pl.Series([keccak256(c) for c in distinct.to_list()], dtype=pl.Binary())
        code_hash = pc.cast(codes.replace_strict(distinct, hashes, return_dtype=pl.Binary()).to_arrow(), pa.binary(32))
        return table.set_column(table.column_names.index("code_hash"), "code_hash", code_hash)


SLOT_MARK = "5107" * 16
"""The first word of a slot reader's answer: where a node did not put the reader's code at the account (it ignores
state overrides), the account's own code answered, and this word tells."""


def _slot_reader() -> str:
    """Code that answers the mark, then SLOAD of each 32-byte key of its calldata, in order. It is put at the account
    read by a state override, so SLOAD reads that account's storage: what eth_getStorageAt reads."""
    code = bytearray(b"\x7f" + bytes.fromhex(SLOT_MARK) + b"\x60\x00\x52\x60\x00")  # mem[0] = mark; i = 0
    loop = len(code)
    code += b"\x5b\x36\x81\x10\x15\x60\x00"  # JUMPDEST; CALLDATASIZE DUP2 LT ISZERO: [i, i >= size]; PUSH1 end
    end_at = len(code) - 1
    code += b"\x57\x80\x35\x54\x81\x60\x20\x01\x52"  # JUMPI; mem[i + 32] = SLOAD(CALLDATALOAD(i))
    code += b"\x60\x20\x01\x60" + bytes([loop]) + b"\x56"  # i += 32; JUMP loop
    code[end_at] = len(code)
    code += b"\x5b\x60\x20\x01\x60\x00\xf3"  # JUMPDEST end; RETURN(0, size + 32)
    return "0x" + code.hex()


SLOT_READER = _slot_reader()


class Slots(StateRead):
    """Slots are read an account and block at a time: one eth_call to the account whose state override puts
    :data:`SLOT_READER` at it, reading every asked key, instead of an eth_getStorageAt per key. Where the first call
    of a piece is refused or its answer lacks :data:`SLOT_MARK` (a node without state overrides), the piece is read
    by eth_getStorageAt per key, as before."""

    name = "slots"
    doc = "Storage slot values at blocks: SLOAD of each key, per block and address (32-byte words)."
    columns = ("chain_id", "block_number", "address", "storage_key", "storage_value")
    sort = ("block_number", "address", "storage_key")
    fetched_with = (
        "eth_call per block (or every N-th) and address, with a state override putting code that reads every asked "
        "key (SLOAD) at the address; where a node does not apply it, eth_getStorageAt per block, address and key; "
        "batched"
    )
    method = "eth_call"
    result = "storage_value"
    keyed = True
    inputs = (ADDRESSES, STORAGE_KEYS, EVERY)
    needs = frozenset({"addresses", "storage_keys"})
    row_checks = RowChecks(keys=("block_number", "address", "storage_key"))

    def _calls(self, plan: Mapping[str, list[Any]]) -> list[tuple[str, list[Any]]]:
        data = "0x" + "".join(key[2:] for key in plan["keys"])
        gas = hex(60_000 + 3_000 * len(plan["keys"]))
        return [
            (self.method, [{"to": a, "data": data, "gas": gas, "gasPrice": "0x0"}, hex(n), {a: {"code": SLOT_READER}}])
            for n in plan["blocks"]
            for a in plan["addresses"]
        ]

    async def fetch(self, client: Any, blocks: BlockRange, **filters: Any) -> list[bytes]:
        plan = asked(blocks, filters)
        calls = self._calls(plan)
        if not calls:
            return [json.dumps({**plan, "each": False}).encode()]
        try:  # the first call alone: a node that refuses or ignores the override costs one call a piece
            first = await client.batch_bytes(calls[:1])
            marked = words(self.method, [batch_results(first[0], pl.String())], _slot_sizes(plan, 1))[0] == SLOT_MARK
        except (StateUnavailable, TransientError):
            raise
        except (RPCError, DecodeError):
            marked = False
        if marked:
            return [json.dumps({**plan, "each": False}).encode(), *first, *await client.batch_bytes(calls[1:])]
        each = [
            ("eth_getStorageAt", [a, k, hex(n)])
            for n in plan["blocks"]
            for a in plan["addresses"]
            for k in plan["keys"]
        ]
        return [json.dumps({**plan, "each": True}).encode(), *await client.batch_bytes(each)]

    def results(self, plan: Mapping[str, Any], answers: list[pl.Series]) -> pl.Series:
        """Each call's words past its mark (every call's first word must be the mark), or eth_getStorageAt's
        answers as they came."""
        if plan["each"]:
            return super().results(plan, answers)
        found = words(self.method, answers, _slot_sizes(plan, len(plan["blocks"]) * len(plan["addresses"])))
        marks = found.gather_every(len(plan["keys"]) + 1)
        if not (marks == SLOT_MARK).all():
            raise DecodeError(f"{self.method}: an answer lacks the slot reader's mark (the override was not applied)")
        kept = pl.int_range(found.len(), eager=True) % (len(plan["keys"]) + 1) != 0
        return "0x" + found.filter(kept)


def _slot_sizes(plan: Mapping[str, Any], calls: int) -> pl.Series:
    return pl.Series([len(plan["keys"]) + 1] * calls, dtype=pl.UInt32())


BALANCES = Balances()
NONCES = Nonces()
CODES = Codes()
SLOTS = Slots()
