"""A deterministic workload for the devnet, and the ground truth it implies.

The plan (:func:`plan_workload`) is a pure function of a :class:`WorkloadSpec`: which transactions go in which block,
of which type, and what each must produce (status, number of logs). :func:`build_chain` sends the plan to an anvil
that mines only on demand, checks that every mined block holds what was sent (anvil can silently drop transactions
from a block that mixes a revert and a creation), and records where each transaction landed. The resulting
:class:`GroundTruth` comes from the plan, never from reading the node's answers back, so tests that compare the node
(or our extraction) against it can fail.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from chainframe.devnet._anvil import AnvilNetwork
from chainframe.devnet._contracts import EvmVersion, calldata, deploy_data
from chainframe.devnet._errors import DevnetError

if TYPE_CHECKING:
    from chainframe.devnet._node import Node

TxKind = Literal[
    "deploy",
    "create_token",
    "eth_transfer",
    "erc20_transfer",
    "emit",
    "ping",
    "dive",
    "spawn",
    "store_set",
    "set_code",
    "revert_token",
    "revert_nest",
    "scatter",
    "vault_open",
    "vault_close",
    "deposit_mint",
    "deposit_call",
    "deposit_create",
    "deposit_system",
]

_RANDOM_KINDS: tuple[TxKind, ...] = (
    "eth_transfer", "erc20_transfer", "ping", "dive", "spawn", "store_set", "revert_token", "revert_nest",
)  # fmt: skip
_RANDOM_WEIGHTS = (6, 6, 2, 2, 1, 2, 1, 1)
_GWEI = 10**9
_FEE_CAP = 200 * _GWEI  # far above any base fee these blocks reach, so nothing waits in the pool
_TOKEN_SUPPLY = 10**27
_DEPLOYED = ("Token", "Emitter", "Nest", "Store", "Purse")  # block 1, in this order, from account 0
_REVERTER = 9  # never receives tokens, so its token transfers always revert
_SCATTER_EVERY = 10  # blocks numbered 5, 15, 25, ... (ordinary ones) hold one Purse.scatter: ether moved by traces
_ETHER = 10**18
# An EIP-7702 authority outside the dev accounts (so no other transaction of the plan meets its delegated code): it
# signs an authorization delegating to Store, and a type-4 transaction from account 0 carries it and calls Store's
# code at the authority's address. The key is a fixed test value, never funded.
_AUTHORITY_KEY = bytes(range(1, 33))

DEPOSIT_TYPE = 0x7E
# OP deposits come from L1 addresses: these never sign anything on the chain, so a deposit never meets a dev account's
# nonce (anvil's pool keeps one deposit per sender and block and drops the rest). One per deposit of a block.
_DEPOSITORS = tuple(f"0x{0xD0000 + k:040x}" for k in range(1, 3))

# anvil's dev accounts from its well-known test mnemonic ("test test ... junk"); checked against the node at build.
DEV_ACCOUNTS = (
    "0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266",
    "0x70997970c51812dc3a010c7d01b50e0d17dc79c8",
    "0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc",
    "0x90f79bf6eb2c4f870365e785982e1f101e93b906",
    "0x15d34aaf54267db7d7c367839aaf71a00a2c6a65",
    "0x9965507d1a55bcc2695c58ba16fb37d819b0a4dc",
    "0x976ea74026e726554db657fa54763abd0c3a0aa9",
    "0x14dc79964da2c08b23698b3d3cc7ca32193d9955",
    "0x23618e81e3f5cdf7f54c3d65f7fbc0abf5b21e8f",
    "0xa0ee7a142d267c1f36714e4a8f75612f20a79720",
)


@dataclass(frozen=True, kw_only=True)
class WorkloadSpec:
    """What chain to build. Equal specs build chains with identical block hashes."""

    name: str = "test"
    """Label used in cache file names."""
    blocks: int = 240
    """Blocks after genesis (a few more are mined only if anvil dropped transactions and they had to be resent)."""
    seed: int = 7
    """Seed of the plan's random choices."""
    txs_per_block: int = 6
    """Average number of mixed transactions per ordinary block, on top of its one log-heavy transaction."""
    logs_per_emit: int = 60
    """Logs emitted by the log-heavy transaction of each ordinary block."""
    chain_id: int = 31337
    genesis_timestamp: int = 1_700_000_000
    block_interval: int = 12
    """Seconds between block timestamps."""
    creation_every: int = 40
    """Every N-th block holds a single contract creation and nothing else."""
    empty_every: int = 25
    """Every N-th block is empty (0: never)."""
    gas_limit: int | None = None
    """Block gas limit for the node (anvil's default when None)."""
    network: AnvilNetwork = "ethereum"
    """The node's rules. ``optimism``: OP Stack's, and each ordinary block also holds OP deposits (with and without
    mint, calling a contract, creating one, and one system deposit), planned apart so the rest of the plan is the
    same."""

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        if self.network == "ethereum":  # chains built before the field existed keep their cache key
            del d["network"]
        return d


TEST_WORKLOAD = WorkloadSpec()
"""The chain the default test suite and the demo run on: 240 blocks, ~15,000 logs (over the 10,000 limit)."""

NODES_WORKLOAD = WorkloadSpec(name="nodes", blocks=41)
"""The chain built on Hardhat and Ganache at each start (they cannot load anvil's state dump): 42 blocks, ~280
transactions of every kind, in seconds."""

BENCH_WORKLOAD = WorkloadSpec(
    name="bench", blocks=2000, txs_per_block=8, logs_per_emit=150, creation_every=100, empty_every=0
)
"""The benchmark chain: 2,000 blocks, ~18,000 transactions, ~300,000 logs."""


def on_op_stack(spec: WorkloadSpec) -> WorkloadSpec:
    """The same workload on an OP-mode node, with deposits beside its traffic, on OP Mainnet's chain id (so the OP
    Stack family follows from it). anvil runs every OP hardfork from genesis, so the chain starts after OP Mainnet's
    Isthmus (2025-05-09): the hardforks chain id 10 has at each block's time are the ones the node ran."""
    return replace(spec, name=f"{spec.name}-op", network="optimism", chain_id=10, genesis_timestamp=1_760_000_000)


OP_WORKLOAD = on_op_stack(WorkloadSpec(name="small", blocks=24, logs_per_emit=10))
"""An OP Stack chain: 25 blocks of the usual traffic with deposits of every kind beside it, built in seconds."""


@dataclass(frozen=True)
class Deposit:
    """What makes a planned transaction an OP deposit (type 0x7e): no signature and no nonce, gas bought on L1."""

    sender: str
    """An L1 address (never a dev account)."""
    source_hash: str
    mint: int | None
    """Ether minted to the sender on L2 before the call; None: the key is not sent."""
    system: bool


@dataclass(frozen=True)
class TxIntent:
    """One planned transaction. ``to`` names a contract, or is an account address, or is None for a creation.
    ``sender`` is a dev account's index (-1 for a deposit, whose sender is its ``deposit``'s)."""

    kind: TxKind
    sender: int
    nonce: int
    tx_type: int
    to: str | None
    data: str
    value: int
    gas: int
    status: int
    logs: int
    deposit: Deposit | None = None


@dataclass(frozen=True)
class TxRecord:
    """Where a planned transaction landed, with what the plan says it must produce."""

    hash: str
    block: int
    index: int
    kind: TxKind
    tx_type: int
    sender: str
    to: str | None
    status: int
    logs: int


@dataclass(frozen=True)
class GroundTruth:
    """What the built chain holds, known from the plan."""

    spec: dict[str, Any]
    chain_id: int
    head: int
    contracts: dict[str, str]
    txs: list[TxRecord] = field(repr=False)

    @property
    def block_count(self) -> int:
        """Blocks including genesis (0..head)."""
        return self.head + 1

    @property
    def tx_count(self) -> int:
        return len(self.txs)

    @property
    def log_count(self) -> int:
        return sum(t.logs for t in self.txs)

    @property
    def reverted_count(self) -> int:
        return sum(1 for t in self.txs if t.status == 0)

    @property
    def creation_count(self) -> int:
        return sum(1 for t in self.txs if t.to is None)

    def txs_by_type(self) -> dict[int, int]:
        return dict(sorted(Counter(t.tx_type for t in self.txs).items()))

    def txs_by_kind(self) -> dict[str, int]:
        return dict(sorted(Counter(t.kind for t in self.txs).items()))

    def txs_per_block(self) -> list[int]:
        counts = Counter(t.block for t in self.txs)
        return [counts.get(n, 0) for n in range(self.head + 1)]

    def logs_per_block(self) -> list[int]:
        counts: Counter[int] = Counter()
        for t in self.txs:
            counts[t.block] += t.logs
        return [counts.get(n, 0) for n in range(self.head + 1)]

    def timestamp(self, block: int) -> int:
        return int(self.spec["genesis_timestamp"]) + int(self.spec["block_interval"]) * block

    def to_json(self) -> str:
        return json.dumps(
            {
                "spec": self.spec,
                "chain_id": self.chain_id,
                "head": self.head,
                "contracts": self.contracts,
                "txs": [asdict(t) for t in self.txs],
            },
            indent=1,
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, text: str) -> GroundTruth:
        d = json.loads(text)
        return cls(
            spec=d["spec"],
            chain_id=d["chain_id"],
            head=d["head"],
            contracts=d["contracts"],
            txs=[TxRecord(**t) for t in d["txs"]],
        )


class _Planner:
    def __init__(self, spec: WorkloadSpec, evm: EvmVersion, set_code: bool) -> None:
        self.spec = spec
        self.evm: EvmVersion = evm
        self.set_code = set_code
        self.rng = random.Random(spec.seed)
        self.nonces = [0] * 10
        self.deposit_rng = random.Random(spec.seed + 1)  # its own numbers: the ordinary plan stays as it is

    def tx(
        self,
        kind: TxKind,
        sender: int,
        to: str | None,
        data: str = "0x",
        *,
        gas: int,
        value: int = 0,
        status: int = 1,
        logs: int = 0,
        tx_type: int | None = None,
    ) -> TxIntent:
        nonce = self.nonces[sender]
        self.nonces[sender] += 1
        if tx_type is None:
            tx_type = self.rng.choice((0, 1, 2, 2))
        return TxIntent(kind, sender, nonce, tx_type, to, data, value, gas, status, logs)

    def random_tx(self) -> TxIntent:
        r = self.rng
        sender = r.randrange(1, 9)
        other = r.choice([a for a in range(1, 9) if a != sender])
        kind = r.choices(_RANDOM_KINDS, weights=_RANDOM_WEIGHTS)[0]
        if kind == "eth_transfer":
            return self.tx(kind, sender, DEV_ACCOUNTS[other], gas=30_000, value=r.randrange(1, 10**18))
        if kind == "erc20_transfer":
            data = calldata("Token", "transfer(address,uint256)", DEV_ACCOUNTS[other], r.randrange(1, 10**6))
            return self.tx(kind, sender, "Token", data, gas=80_000, logs=1)
        if kind == "ping":
            payload = bytes(r.randrange(256) for _ in range(r.randrange(0, 100)))
            data = calldata("Emitter", "ping(uint256,bytes)", r.randrange(10**9), payload)
            return self.tx(kind, sender, "Emitter", data, gas=80_000, logs=1)
        if kind == "dive":
            depth = r.randrange(1, 6)
            data = calldata("Nest", "dive(uint256)", depth)
            return self.tx(kind, sender, "Nest", data, gas=80_000 + 60_000 * depth, logs=depth + 1)
        if kind == "spawn":
            return self.tx(kind, sender, "Nest", calldata("Nest", "spawn()"), gas=500_000, logs=2)
        if kind == "store_set":
            data = calldata("Store", "set(uint256,uint256)", r.randrange(16), r.randrange(1, 10**30))
            return self.tx(kind, sender, "Store", data, gas=80_000, logs=1)
        if kind == "revert_token":
            data = calldata("Token", "transfer(address,uint256)", DEV_ACCOUNTS[other], 1)
            return self.tx(kind, _REVERTER, "Token", data, gas=100_000, status=0)
        data = calldata("Nest", "fail(uint256)", r.randrange(100))
        return self.tx("revert_nest", sender, "Nest", data, gas=100_000, status=0)

    def deposits(self, number: int) -> list[TxIntent]:
        """Two deposits for an ordinary block: one moving ether (minted, or from an empty sender, none) and one
        calling Emitter, or creating a Token (every 8th block), or, once (block 4), a system deposit, which OP rules
        from Regolith on refuse: it is included as failed, all its gas used."""
        r = self.deposit_rng

        def deposit(
            kind: TxKind,
            slot: int,
            to: str | None,
            data: str = "0x",
            *,
            gas: int,
            value: int = 0,
            mint: int | None = None,
            system: bool = False,
            status: int = 1,
            logs: int = 0,
        ) -> TxIntent:
            source = "0x" + r.randbytes(32).hex()
            made = Deposit(_DEPOSITORS[slot], source, mint, system)
            return TxIntent(kind, -1, 0, DEPOSIT_TYPE, to, data, value, gas, status, logs, made)

        recipient = DEV_ACCOUNTS[r.randrange(1, 9)]
        if number % 2:
            value = r.randrange(1, 10**18)
            first = deposit("deposit_mint", 0, recipient, gas=30_000, value=value, mint=value + r.randrange(10**15))
        else:
            first = deposit("deposit_mint", 0, recipient, gas=30_000)  # neither mint nor value
        if number == 4:
            second = deposit("deposit_system", 1, recipient, gas=100_000, system=True, status=0)
        elif number % 8 == 0:
            data = deploy_data("Token", r.randrange(1, 10**30), evm=self.evm)
            second = deposit("deposit_create", 1, None, data, gas=1_000_000, mint=r.randrange(10**18), logs=1)
        else:
            payload = r.randbytes(r.randrange(0, 40))
            data = calldata("Emitter", "ping(uint256,bytes)", r.randrange(10**9), payload)
            second = deposit("deposit_call", 1, "Emitter", data, gas=80_000, logs=1)
        return [first, second]

    def plan(self) -> list[list[TxIntent]]:
        spec = self.spec
        blocks: list[list[TxIntent]] = []
        # Block 1: the contracts. Block 2: token balances for accounts 1..8.
        supply = (_TOKEN_SUPPLY,)
        blocks.append(
            [
                # The Token constructor mints, which logs one Transfer.
                self.tx("deploy", 0, None, deploy_data(name, *supply, evm=self.evm), gas=1_000_000, logs=1)
                if name == "Token"
                else self.tx("deploy", 0, None, deploy_data(name, evm=self.evm), gas=1_000_000)
                for name in _DEPLOYED
            ]
        )
        blocks.append(
            [
                self.tx(
                    "erc20_transfer",
                    0,
                    "Token",
                    calldata("Token", "transfer(address,uint256)", DEV_ACCOUNTS[a], 10**24),
                    gas=80_000,
                    logs=1,
                )
                for a in range(1, 9)
            ]
        )
        if self.set_code:  # a node without EIP-7702 gets no type-4 transaction (and sender 0 no nonce for it)
            blocks[-1].append(
                self.tx(
                    "set_code",
                    0,
                    authority_address(),
                    calldata("Store", "set(uint256,uint256)", 7, 11),
                    gas=200_000,
                    logs=1,
                    tx_type=4,
                )
            )
        # Ether that only traces show, without drawing on the plan's random numbers (the rest of the chain stays as
        # it was): a Vault created with value by Purse (block 2) and self-destructed by it in the next block.
        blocks[-1].append(self.tx("vault_open", 0, "Purse", calldata("Purse", "open()"), gas=400_000, value=_ETHER,
                                  tx_type=2))  # fmt: skip
        for number in range(3, spec.blocks + 1):
            if spec.creation_every and number % spec.creation_every == 0:
                # Alone in its block: anvil can drop transactions from a block mixing a creation and a revert.
                sender = self.rng.randrange(1, 9)
                data = deploy_data("Token", self.rng.randrange(1, 10**30), evm=self.evm)
                blocks.append([self.tx("create_token", sender, None, data, gas=1_000_000, logs=1)])
            elif spec.empty_every and number % spec.empty_every == 0:
                blocks.append([])
            else:
                n = spec.logs_per_emit
                emit = self.tx(
                    "emit",
                    0,
                    "Emitter",
                    calldata("Emitter", "emitMany(uint256)", n),
                    gas=60_000 + 2_500 * n,
                    logs=n,
                )
                low, high = max(0, spec.txs_per_block // 2), spec.txs_per_block * 3 // 2
                blocks.append([emit] + [self.random_tx() for _ in range(self.rng.randint(low, high))])
                if number == 3:
                    heir = DEV_ACCOUNTS[_REVERTER]
                    data = calldata("Purse", "close(address)", heir)
                    blocks[-1].append(self.tx("vault_close", 0, "Purse", data, gas=100_000, tx_type=2))
                if number % _SCATTER_EVERY == _SCATTER_EVERY // 2:
                    # An internal transfer, a reverted internal call with value, a creation with value that
                    # self-destructs in its own transaction; one Scattered log.
                    to = DEV_ACCOUNTS[1 + (number // _SCATTER_EVERY) % 8]
                    data = calldata("Purse", "scatter(address)", to)
                    blocks[-1].append(self.tx("scatter", 0, "Purse", data, gas=300_000, value=_ETHER // 10, logs=1,
                                              tx_type=2))  # fmt: skip
                if spec.network == "optimism":
                    blocks[-1] += self.deposits(number)
        return blocks


def plan_workload(spec: WorkloadSpec, *, evm: EvmVersion = "cancun", set_code: bool = True) -> list[list[TxIntent]]:
    """The transactions of blocks 1..spec.blocks, in block order: the contracts compiled for ``evm``, and the
    EIP-7702 transaction of block 2 only where the node takes ``set_code`` transactions."""
    return _Planner(spec, evm, set_code).plan()


def authority_address() -> str:
    """The address of the EIP-7702 authority's key."""
    from coincurve import PrivateKey

    from chainframe.decode import keccak256  # deferred: only EIP-7702 authorizations are signed with it

    public = PrivateKey(_AUTHORITY_KEY).public_key.format(compressed=False)[1:]
    return "0x" + keccak256(public)[12:].hex()


def authorization(chain_id: int, delegate: str, *, nonce: int) -> dict[str, str]:
    """The authority's signed EIP-7702 authorization to run ``delegate``'s code: keccak(0x05 || rlp([chain id,
    address, nonce])) signed with recovery id (coincurve: libsecp256k1, see pyproject)."""
    from coincurve import PrivateKey

    # deferred: only EIP-7702 authorizations are signed with it
    from chainframe._rlp import python_rlp as rlp
    from chainframe._rlp import uint
    from chainframe.decode import keccak256

    address = bytes.fromhex(delegate.removeprefix("0x"))
    digest = keccak256(b"\x05" + rlp([uint(chain_id), address, uint(nonce)]))
    signature = PrivateKey(_AUTHORITY_KEY).sign_recoverable(digest, hasher=None)
    return {
        "chainId": hex(chain_id), "address": "0x" + address.hex(), "nonce": hex(nonce),
        "yParity": hex(signature[64]), "r": hex(int.from_bytes(signature[:32], "big")),
        "s": hex(int.from_bytes(signature[32:64], "big")),
    }  # fmt: skip


def _tx_object(intent: TxIntent, contracts: dict[str, str], chain_id: int) -> dict[str, Any]:
    if intent.deposit is not None:
        return _deposit_object(intent, intent.deposit, contracts)
    tx: dict[str, Any] = {
        "from": DEV_ACCOUNTS[intent.sender],
        "nonce": hex(intent.nonce),
        "gas": hex(intent.gas),
        "value": hex(intent.value),
        "data": intent.data,
    }
    to = None
    if intent.to is not None:
        to = intent.to if intent.to.startswith("0x") else contracts[intent.to]
        tx["to"] = to
    if intent.tx_type in (2, 4):
        tx["maxFeePerGas"] = hex(_FEE_CAP)
        tx["maxPriorityFeePerGas"] = hex(_GWEI + intent.nonce % 7)
        if intent.tx_type == 4:
            tx["type"] = "0x4"
            tx["authorizationList"] = [authorization(chain_id, contracts["Store"], nonce=0)]
    else:
        tx["gasPrice"] = hex(_FEE_CAP)
        if intent.tx_type == 1:
            tx["type"] = "0x1"
            tx["accessList"] = [{"address": to or DEV_ACCOUNTS[intent.sender], "storageKeys": ["0x" + "00" * 32]}]
        else:
            tx["type"] = "0x0"
    return tx


def _deposit_object(intent: TxIntent, deposit: Deposit, contracts: dict[str, str]) -> dict[str, Any]:
    """anvil (``--network optimism``) makes a deposit of a sent transaction with ``sourceHash`` and ``isSystemTx``
    (without ``isSystemTx`` it is sent as an ordinary type-2 transaction)."""
    tx: dict[str, Any] = {
        "from": deposit.sender, "gas": hex(intent.gas), "value": hex(intent.value), "data": intent.data,
        "sourceHash": deposit.source_hash, "isSystemTx": deposit.system,
    }  # fmt: skip
    if deposit.mint is not None:
        tx["mint"] = hex(deposit.mint)
    if intent.to is not None:
        tx["to"] = contracts.get(intent.to, intent.to)
    return tx


def build_chain(spec: WorkloadSpec, node: Node, *, max_resends: int = 5) -> GroundTruth:
    """Send the plan to a fresh node started with ``auto_mine=False``; return the ground truth of what it mined.

    On Hardhat and Ganache a transaction's status and logs are the plan's: what the node made of it is its own answer
    (the same plan reverts more transactions there), which tests read from that node, never from another."""
    rpc = node.rpc
    accounts = [a.lower() for a in rpc.call("eth_accounts")]
    if tuple(accounts) != DEV_ACCOUNTS:
        raise DevnetError("the node's dev accounts are not anvil's test-mnemonic accounts; start it with defaults")
    if int(rpc.call("eth_blockNumber"), 16) != 0:
        raise DevnetError("the workload must be built on a fresh chain (the node already has blocks)")
    contracts: dict[str, str] = {}
    records: list[TxRecord] = []
    plan = plan_workload(spec, evm=node.evm, set_code=node.set_code)
    waiting: list[TxIntent] = []  # dropped by anvil from the last block; resent in the next
    number = 0
    resends = 0
    while plan or waiting:
        intents = waiting + (plan.pop(0) if plan else [])
        if not plan and waiting:
            resends += 1
            if resends > max_resends:
                raise DevnetError(f"anvil kept dropping {len(waiting)} transactions after {max_resends} resends")
        number += 1
        hashes = rpc.batch([("eth_sendTransaction", [_tx_object(i, contracts, spec.chain_id)]) for i in intents])
        node.mine(spec.genesis_timestamp + spec.block_interval * number)
        mined: list[str] = rpc.call("eth_getBlockByNumber", hex(number), False)["transactions"]
        position = {h: k for k, h in enumerate(mined)}
        if len(position) != len(mined) or not set(mined) <= set(hashes):
            raise DevnetError(f"block {number} holds transactions the workload did not send")
        waiting = []
        for intent, tx_hash in zip(intents, hashes, strict=True):
            if tx_hash not in position:
                waiting.append(intent)
                continue
            to = None
            if intent.to is not None:
                to = intent.to if intent.to.startswith("0x") else contracts[intent.to]
            records.append(
                TxRecord(
                    tx_hash,
                    number,
                    position[tx_hash],
                    intent.kind,
                    intent.tx_type,
                    intent.deposit.sender if intent.deposit else DEV_ACCOUNTS[intent.sender],
                    to,
                    intent.status,
                    intent.logs,
                )
            )
        if number == 1:
            if waiting:
                raise DevnetError("anvil dropped a contract deployment from block 1")
            receipts = rpc.batch([("eth_getTransactionReceipt", [h]) for h in hashes])
            contracts = {name: r["contractAddress"] for name, r in zip(_DEPLOYED, receipts, strict=True)}
    records.sort(key=lambda r: (r.block, r.index))
    return GroundTruth(spec=spec.to_json(), chain_id=spec.chain_id, head=number, contracts=contracts, txs=records)
