"""Each room of the package (a sub-package) is entered through its public names: no module imports another room's
private modules. The package's own shared primitives (``chainframe._errors``, ``_kernels``, ``_keccak``, ``_rlp``,
...) are for every room."""

from __future__ import annotations

import ast
from pathlib import Path

import chainframe

SRC = Path(chainframe.__file__).parent
ROOMS = sorted(p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists())
ALLOWED = {
    ("cli", "chainframe.datasets._registry"): "the catalogue's lines, read before pyarrow loads (cli/_process.py)",
    ("cli", "chainframe.datasets._inputs"): "the declared inputs' flags, read before pyarrow loads (cli/_process.py)",
}


def _reaches(path: Path, room: str) -> list[tuple[int, str]]:
    """Another room's private modules ``path`` imports: (line, module)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for name in names:
            parts = name.split(".")
            if len(parts) < 3 or parts[0] != "chainframe" or parts[1] not in ROOMS or parts[1] == room:
                continue
            if parts[2].startswith("_"):
                found.append((node.lineno, ".".join(parts[:3])))
    return found


def test_no_room_imports_another_rooms_private_modules() -> None:
    assert len(ROOMS) >= 7, ROOMS  # cli, datasets, decode, devnet, engine, rpc, store, verify
    found = [
        f"{path.relative_to(SRC)}:{line} imports {module}"
        for room in ROOMS
        for path in sorted((SRC / room).rglob("*.py"))
        for line, module in _reaches(path, room)
        if (room, module) not in ALLOWED
    ]
    assert not found, "import the room's public names instead:\n" + "\n".join(sorted(set(found)))


def test_the_allowances_are_still_needed() -> None:
    for room, module in ALLOWED:
        reached = {m for path in (SRC / room).rglob("*.py") for _, m in _reaches(path, room)}
        assert module in reached, (room, module)
