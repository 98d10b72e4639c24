"""An Infura-compatible gateway in front of local nodes: the service spec's paths, keys and limits, plus faults.

:class:`GatewayProcess` (the parent's handle, over httpx) loads on first use: the gateway's own process
(``__main__``) serves with aiohttp alone."""

from typing import TYPE_CHECKING

from chainframe._lazy import names_from
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

if TYPE_CHECKING:
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

__getattr__ = names_from(__name__, {"GatewayProcess": "_process"})
