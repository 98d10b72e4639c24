"""An Infura-compatible gateway in front of local nodes: the service spec's paths, keys and limits, plus faults."""

from chainframe.devnet.gateway._config import (
    FaultKind,
    FaultRule,
    GatewayConfig,
    GatewaySettings,
    LogLimits,
    MissingMethod,
    NodeKind,
    OmitKeys,
    PrunedKind,
    PrunedState,
)
from chainframe.devnet.gateway._process import GatewayProcess

__all__ = [
    "FaultKind",
    "FaultRule",
    "GatewayConfig",
    "GatewayProcess",
    "GatewaySettings",
    "LogLimits",
    "MissingMethod",
    "NodeKind",
    "OmitKeys",
    "PrunedKind",
    "PrunedState",
]
