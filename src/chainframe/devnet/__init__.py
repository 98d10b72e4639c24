"""The local devnet: real nodes (anvil, Hardhat or Ganache), a deterministic workload with known ground truth, and an
Infura-compatible gateway in front (keys, limits, faults). It is what chainframe is tested against, and what
``chainframe devnet`` serves for pointing your own pipelines at offline.

Names load on first use (:func:`chainframe._lazy.names_from`): the gateway's own process imports this package on its
way to ``chainframe.devnet.gateway`` and needs none of the nodes, chains and workloads, nor httpx.
"""

from typing import TYPE_CHECKING

from chainframe._lazy import names_from

if TYPE_CHECKING:
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

_WHERE = {
    "ANVIL_VERSION": "_anvil",
    "AnvilNetwork": "_anvil",
    "AnvilNode": "_anvil",
    "AnvilOptions": "_anvil",
    "find_anvil": "_anvil",
    "BuiltChain": "_chain",
    "default_cache_dir": "_chain",
    "ensure_chain": "_chain",
    "DEVNET_NETWORK": "_devnet",
    "Devnet": "_devnet",
    "DevnetError": "_errors",
    "GANACHE_VERSION": "_ganache",
    "GanacheNode": "_ganache",
    "HARDHAT_VERSION": "_hardhat",
    "HardhatNode": "_hardhat",
    "NODE_NAMES": "_node",
    "Node": "_node",
    "NodeName": "_node",
    "start_node": "_node",
    "BENCH_WORKLOAD": "_workload",
    "DEV_ACCOUNTS": "_workload",
    "NODES_WORKLOAD": "_workload",
    "OP_WORKLOAD": "_workload",
    "TEST_WORKLOAD": "_workload",
    "GroundTruth": "_workload",
    "TxRecord": "_workload",
    "WorkloadSpec": "_workload",
    "on_op_stack": "_workload",
    "plan_workload": "_workload",
    "FaultRule": "gateway",
    "GatewayConfig": "gateway",
    "GatewayProcess": "gateway",
    "GatewaySettings": "gateway",
    "LogLimits": "gateway",
    "MissingMethod": "gateway",
    "OmitKeys": "gateway",
    "PrunedState": "gateway",
}
__getattr__ = names_from(__name__, _WHERE)
