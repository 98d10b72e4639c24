"""Each room of the package (a sub-package) is entered through its public names: no module imports another room's
private modules. The package's own shared primitives (``chainframe._errors``, ``_kernels``, ``_keccak``, ``_rlp``,
...) are for every room."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import chainframe

SRC = Path(chainframe.__file__).parent
ROOMS = sorted(p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists())
ALLOWED = {
    ("cli", "chainframe.datasets._registry"): (
        "the catalogue's lines, read before pyarrow loads (cli/_process.py), and the datasets registered at run time "
        "that `datasets` and `schema` describe from their classes (cli/_described.py)"
    ),
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
                found.append((getattr(node, "lineno", 0), ".".join(parts[:3])))
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


STARTUP = "start-up"
"""Said in the comment of a deferred import kept for start-up time (on its line or the line above): such an import
is no arrow of the graph below. Every other import counts, inside a function or not (``if TYPE_CHECKING:`` blocks
run at no time and do not)."""


def _modules() -> dict[str, Path | None]:
    """Every module of the package by dotted name below ``chainframe`` (C extensions too: no source to read)."""
    found: dict[str, Path | None] = {}
    for path in SRC.rglob("*"):
        if path.suffix not in (".py", ".c") or "__pycache__" in path.parts:
            continue
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        name = ".".join(["chainframe", *(parts[:-1] if parts[-1] == "__init__" else parts)])
        found[name] = path if path.suffix == ".py" else None
    return found


def _arrows(name: str, path: Path, modules: dict[str, Path | None]) -> list[tuple[str, bool, int, bool]]:
    """The package's modules ``name`` imports when run: (module, deferred, line, kept for start-up time)."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[tuple[str, bool, int, bool]] = []

    def visit(node: ast.AST, deferred: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and isinstance(child.test, ast.Name) and child.test.id == "TYPE_CHECKING":
                for other in child.orelse:
                    visit_one(other, deferred)
            else:
                visit_one(child, deferred)

    def visit_one(node: ast.AST, deferred: bool) -> None:
        if isinstance(node, ast.Import):
            targets = {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            targets = {f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names}
        else:
            visit(node, deferred or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda))
            return
        startup = deferred and STARTUP in " ".join(lines[max(node.lineno - 2, 0) : node.lineno])
        found.extend((t, deferred, node.lineno, startup) for t in sorted(targets) if t in modules and t != name)

    visit(ast.parse(text), False)
    return found


@functools.cache
def _circles() -> list[frozenset[str]]:
    """The modules that import each other, directly or round a longer circle (Tarjan's strong components)."""
    modules = _modules()
    graph = {
        m: {t for t, _, _, startup in _arrows(m, p, modules) if not startup} if p else set() for m, p in modules.items()
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[frozenset[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = stack[stack.index(v) :]
            del stack[stack.index(v) :]
            if len(part) > 1:
                circles.append(frozenset(m.removeprefix("chainframe.") for m in part))

    for module in sorted(graph):
        if module not in index:
            strong(module)
    return circles


def test_no_module_imports_one_that_imports_it_back() -> None:
    """A deferred import that only hides a circle counts as the import it is; one kept for start-up time says so."""
    left = [sorted(c) for c in _circles()]
    assert not left, f"import circles (move the shared helper to the module whose concept it is): {left}"


if __name__ == "__main__":  # the numbers of issue 38's closing note: python tests/test_rooms.py
    every = _modules()
    deferred = [startup for m, p in every.items() if p for _, d, _, startup in _arrows(m, p, every) if d]
    print(f"{len(every)} modules; {len(deferred)} imports of the package's own modules inside functions, "
          f"{sum(deferred)} of them kept for start-up time")  # fmt: skip
    for circle in _circles():
        print("circle:", ", ".join(sorted(circle)))
