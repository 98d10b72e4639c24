"""The workload's compiled contracts (``contracts/artifacts.json``, and ``artifacts-shanghai.json`` for nodes without
Cancun's opcodes) and the little ABI encoding the workload needs.

Only static ``uint256``/``address`` arguments and one trailing ``bytes`` are encoded: that is all the workload calls
use, and a general ABI codec is not this module's job.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Literal

EvmVersion = Literal["cancun", "shanghai"]
"""The EVM versions the contracts are compiled for (``contracts/build.mjs``): the newest each devnet node runs."""
_FILES: dict[EvmVersion, str] = {"cancun": "artifacts.json", "shanghai": "artifacts-shanghai.json"}


@dataclass(frozen=True)
class Artifact:
    name: str
    bytecode: str
    deployed_bytecode: str
    methods: dict[str, str]
    events: dict[str, str]

    def selector(self, signature: str) -> str:
        try:
            return self.methods[signature]
        except KeyError:
            raise KeyError(f"{self.name} has no method {signature}; it has {sorted(self.methods)}") from None


@cache
def artifacts_bytes(evm: EvmVersion = "cancun") -> bytes:
    return resources.files("chainframe.devnet").joinpath("contracts", _FILES[evm]).read_bytes()


@cache
def artifacts(evm: EvmVersion = "cancun") -> dict[str, Artifact]:
    data: dict[str, Any] = json.loads(artifacts_bytes(evm))
    return {
        name: Artifact(
            name=name,
            bytecode=c["bytecode"],
            deployed_bytecode=c["deployedBytecode"],
            methods=c["methods"],
            events=c["events"],
        )
        for name, c in data["contracts"].items()
    }


def artifacts_digest(evm: EvmVersion = "cancun") -> str:
    """A digest of the compiled contracts, part of a built chain's cache key."""
    return hashlib.sha256(artifacts_bytes(evm)).hexdigest()


def _word(value: int | str) -> str:
    if isinstance(value, str):  # an address
        return value.removeprefix("0x").lower().rjust(64, "0")
    return format(value, "064x")


def encode_args(*args: int | str | bytes) -> str:
    """ABI-encode static args (int as uint256, 0x-str as address) and at most one trailing ``bytes``."""
    head: list[str] = []
    tail = ""
    for arg in args:
        if isinstance(arg, bytes):
            head.append(_word(32 * len(args)))
            padded = arg.hex().ljust(((len(arg) + 31) // 32) * 64, "0")
            tail = _word(len(arg)) + padded
        else:
            head.append(_word(arg))
    return "".join(head) + tail


def calldata(contract: str, signature: str, *args: int | str | bytes) -> str:
    return "0x" + artifacts()[contract].selector(signature) + encode_args(*args)


def deploy_data(contract: str, *args: int | str, evm: EvmVersion = "cancun") -> str:
    return artifacts(evm)[contract].bytecode + encode_args(*args)
