"""The local devnet: real nodes (anvil, Hardhat or Ganache), a deterministic workload with known ground truth, and an
Infura-compatible gateway in front (keys, limits, faults). It is what chainframe is tested against, and what
``chainframe devnet`` serves for pointing your own pipelines at offline.
"""

from chainframe.devnet._anvil import ANVIL_VERSION, AnvilNetwork, AnvilNode, AnvilOptions, find_anvil
from chainframe.devnet._chain import BuiltChain, default_cache_dir, ensure_chain
from chainframe.devnet._devnet import DEVNET_NETWORK, Devnet
from chainframe.devnet._errors import DevnetError
from chainframe.devnet._ganache import GANACHE_VERSION, GanacheNode
from chainframe.devnet._hardhat import HARDHAT_VERSION, HardhatNode
from chainframe.devnet._node import NODE_NAMES, Node, NodeName, start_node
from chainframe.devnet._workload import (
    BENCH_WORKLOAD,
    DEV_ACCOUNTS,
    NODES_WORKLOAD,
    OP_WORKLOAD,
    TEST_WORKLOAD,
    GroundTruth,
    TxRecord,
    WorkloadSpec,
    on_op_stack,
    plan_workload,
)
from chainframe.devnet.gateway import (
    FaultRule,
    GatewayConfig,
    GatewayProcess,
    GatewaySettings,
    LogLimits,
    MissingMethod,
    OmitKeys,
    PrunedState,
)

__all__ = [
    "ANVIL_VERSION",
    "AnvilNetwork",
    "AnvilNode",
    "AnvilOptions",
    "BENCH_WORKLOAD",
    "BuiltChain",
    "DEVNET_NETWORK",
    "DEV_ACCOUNTS",
    "Devnet",
    "DevnetError",
    "FaultRule",
    "GANACHE_VERSION",
    "GanacheNode",
    "GatewayConfig",
    "GatewayProcess",
    "GatewaySettings",
    "GroundTruth",
    "HARDHAT_VERSION",
    "HardhatNode",
    "LogLimits",
    "MissingMethod",
    "NODES_WORKLOAD",
    "NODE_NAMES",
    "Node",
    "NodeName",
    "OP_WORKLOAD",
    "OmitKeys",
    "PrunedState",
    "TEST_WORKLOAD",
    "TxRecord",
    "WorkloadSpec",
    "default_cache_dir",
    "ensure_chain",
    "find_anvil",
    "on_op_stack",
    "plan_workload",
    "start_node",
]
