"""Where a contract's ABI comes from: a source answers "the ABI of this address on this chain", or that it has none.

:class:`AbiSource` is the interface; :class:`AbiFolder` is the one source built: a folder holding Sourcify's
repository layout (``full_match/<chain id>/<address>/metadata.json`` and ``partial_match/...``, also under a
``contracts/`` folder as Sourcify's newer dumps have it; the ABI is the metadata's ``output.abi``) and Etherscan
``getabi`` answers saved as ``<address>.json`` (``{"status": "1", "message": "OK", "result": "<the ABI as a JSON
string>"}``, or the ABI's list itself). A full match is preferred to a partial one, and both to an Etherscan file.
Fetching from Sourcify's or Etherscan's servers would be another source behind the same interface, off by default
(no request leaves for an ABI unless asked).

A file that is there but unusable (not JSON, metadata without ``output.abi``, an Etherscan answer with status 0) is
refused with :class:`~chainframe.InputError` naming the file and the reason, never skipped.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from chainframe._errors import InputError
from chainframe._keccak import keccak256
from chainframe.decode._abi import events_from_abi, functions_from_abi

Origin = Literal["sourcify full_match", "sourcify partial_match", "etherscan"]
"""Which kind of file an ABI was read from."""

_ADDRESS = re.compile(r"0x[0-9a-fA-F]{40}\Z")


def address_of(text: str, what: str = "address") -> str:
    """An address as lowercase 0x hex; anything else refused."""
    if not isinstance(text, str) or not _ADDRESS.match(text.strip()):
        raise InputError(f"{what} {text!r} is not an address (0x and 40 hex digits)")
    return text.strip().lower()


@dataclass(frozen=True)
class ContractAbi:
    """One contract's ABI as a source found it."""

    address: str
    """The contract, lowercase 0x hex."""
    entries: tuple[dict[str, Any], ...]
    """The ABI's entries (functions, events, errors, constructor...)."""
    file: str
    """The file it was read from (for a network source: the URL)."""
    origin: Origin

    @property
    def digest(self) -> str:
        """The first 16 hex digits of sha-256 of the entries as canonical JSON: two files of one ABI share it."""
        text = json.dumps(list(self.entries), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def of_kind(self, kind: str) -> list[dict[str, Any]]:
        """The entries of one kind (an entry without a type is a function, as the ABI spec says)."""
        return [e for e in self.entries if e.get("type", "function") == kind]


class AbiSource(Protocol):
    """Answers with a contract's ABI on a chain, or None when it has none for it."""

    def abi_of(self, chain_id: int, address: str) -> ContractAbi | None: ...

    def check(self, addresses: Iterable[str]) -> None:
        """Refuse, before any request, what the source holds for ``addresses`` that could not be used (on every
        chain it holds them for: the chain is not known yet): a file that is not an ABI, two ABIs that clash."""
        ...


class AbiFolder:
    """Sourcify's repository layout and Etherscan ``getabi`` files in one folder (see the module's docstring)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if not self.path.is_dir():
            raise InputError(f"--abi-dir {str(path)!r} is not a folder")
        self._roots = [r for r in (self.path, self.path / "contracts") if (r / "full_match").is_dir()
                       or (r / "partial_match").is_dir()]  # fmt: skip

    def __repr__(self) -> str:
        return f"AbiFolder({str(self.path)!r})"

    def _sourcify(self, match: str, chain_id: int | None) -> list[tuple[int, Path]]:
        """The chain folders of one match kind: ``(chain id, folder)``, one chain or all of them."""
        found = []
        for root in self._roots:
            folder = root / match
            if not folder.is_dir():
                continue
            for chain in sorted(folder.iterdir()):
                if chain.name.isdigit() and (chain_id is None or int(chain.name) == chain_id):
                    found.append((int(chain.name), chain))
        return found

    def _files(self, address: str, chain_id: int | None) -> list[tuple[Path, Origin]]:
        """The files that hold ``address``'s ABI, best first: full match, partial match, Etherscan."""
        out: list[tuple[Path, Origin]] = []
        kinds: tuple[tuple[str, Origin], ...] = (
            ("full_match", "sourcify full_match"),
            ("partial_match", "sourcify partial_match"),
        )
        for match, origin in kinds:
            for _, chain in self._sourcify(match, chain_id):
                out += [(d / "metadata.json", origin) for d in _named(chain, address, "") if d.is_dir()]
        out += [(f, "etherscan") for f in _named(self.path, address, ".json") if f.is_file()]
        return out

    def abi_of(self, chain_id: int, address: str) -> ContractAbi | None:
        address = address_of(address)
        files = self._files(address, chain_id)
        return _read(address, *files[0]) if files else None

    def check(self, addresses: Iterable[str]) -> None:
        asked = [address_of(a) for a in addresses]
        for address in asked:
            for file, origin in self._files(address, None):
                _read(address, file, origin)
        chains = {chain for match in ("full_match", "partial_match") for chain, _ in self._sourcify(match, None)}
        for chain in sorted(chains) or [-1]:  # -1: no Sourcify chain, the Etherscan files alone
            refuse_clashes([abi for a in asked if (abi := self.abi_of(chain, a)) is not None])


def _named(folder: Path, address: str, suffix: str) -> list[Path]:
    """``folder``'s entry named ``address`` + ``suffix``, the address checksummed (as Sourcify names its folders)
    or in lowercase; no listing of the folder (a Sourcify chain folder holds millions)."""
    names = dict.fromkeys((checksummed(address), address.lower()))
    return [folder / f"{name}{suffix}" for name in names if (folder / f"{name}{suffix}").exists()][:1]


def checksummed(address: str) -> str:
    """EIP-55: a hex digit is uppercase where the same nibble of keccak-256 of the lowercase hex is 8 or more."""
    digits = address.lower().removeprefix("0x")
    hashed = keccak256(digits.encode()).hex()
    return "0x" + "".join(c.upper() if int(h, 16) >= 8 else c for c, h in zip(digits, hashed[:40], strict=True))


def _read(address: str, file: Path, origin: Origin) -> ContractAbi:
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"ABI file {str(file)!r} is not readable JSON: {exc}") from None
    if origin == "etherscan":
        entries = _etherscan_abi(file, data)
    else:
        abi = data.get("output", {}).get("abi") if isinstance(data, dict) else None
        if not isinstance(data, dict) or not isinstance(data.get("output"), dict) or abi is None:
            raise InputError(f"ABI file {str(file)!r}: Sourcify metadata without an ABI (no output.abi)")
        entries = abi
    return ContractAbi(address, _checked_entries(file, entries), str(file), origin)


def _etherscan_abi(file: Path, data: Any) -> Any:
    if isinstance(data, list):  # the ABI itself, saved under the address's name
        return data
    if not isinstance(data, dict) or "result" not in data:
        raise InputError(f"ABI file {str(file)!r}: neither an ABI list nor an Etherscan getabi answer (no 'result')")
    if str(data.get("status")) != "1":
        raise InputError(f"ABI file {str(file)!r}: Etherscan answered status {data.get('status')!r}: {data['result']}")
    try:
        return json.loads(data["result"]) if isinstance(data["result"], str) else data["result"]
    except ValueError as exc:
        raise InputError(f"ABI file {str(file)!r}: the getabi 'result' is not an ABI in JSON: {exc}") from None


def _checked_entries(file: Path, entries: Any) -> tuple[dict[str, Any], ...]:
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise InputError(f"ABI file {str(file)!r}: an ABI is a JSON list of entries (objects)")
    for i, entry in enumerate(entries):
        if entry.get("type", "function") in ("function", "event") and not isinstance(entry.get("name"), str):
            raise InputError(f"ABI file {str(file)!r}: entry {i} ({entry.get('type', 'function')}) has no name")
    return tuple(entries)


def refuse_clashes(abis: Sequence[ContractAbi]) -> None:
    """Refuse ABIs used together in which two different functions share a selector, or two events of one topic 0
    differ in what they index (a call or a log could not say which it is), naming both files."""
    functions: dict[bytes, tuple[str, ContractAbi]] = {}
    events: dict[bytes, tuple[str, int, ContractAbi]] = {}
    for abi in abis:
        try:
            found_functions = functions_from_abi(abi.of_kind("function"))
            found_events = events_from_abi(abi.of_kind("event"))
        except InputError as exc:
            raise InputError(f"ABI file {abi.file!r}: {exc}") from None
        for function in found_functions:
            other = functions.setdefault(function.selector, (function.signature, abi))
            if other[0] != function.signature:
                raise InputError(
                    f"selector clash: {other[0]} ({other[1].file}) and {function.signature} ({abi.file}) share "
                    f"0x{function.selector.hex()}; a call could not say which it is: decode these contracts apart"
                )
        for event in found_events:
            signature, indexed, first = events.setdefault(event.topic0, (event.signature, len(event.indexed), abi))
            if indexed != len(event.indexed):
                raise InputError(
                    f"event clash: {signature} indexes {indexed} parameters in {first.file} and "
                    f"{len(event.indexed)} in {abi.file}: a log could not say which it is; decode these contracts apart"
                )
