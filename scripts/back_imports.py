"""Count the imports that run back up mnemo's layers.

A "back-import" is a pair of mnemo's top-level packages that import each other (a↔b): one of the
two directions necessarily runs up the layers. Every import counts, at module level or inside a
function, under TYPE_CHECKING or not, since each one ties the two packages together.

    python scripts/back_imports.py            # prints the pairs and their count
    python scripts/back_imports.py --detail   # and the modules behind each direction

tests/unit/test_layers.py holds the count at or under the issue-36 limit (2).
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "libs"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _package(module: str) -> str:
    """The top-level room of a module: mnemo.core.engine -> core; mnemo.logs -> logs."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _imports(path: Path, module: str) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                drop = node.level - 1 if is_package else node.level
                base = base[: len(base) - drop] if drop else base
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
    return {name for name in found if name == "mnemo" or name.startswith("mnemo.")}


def edges() -> dict[tuple[str, str], set[tuple[str, str]]]:
    """(importer package, imported package) -> {(importer module, imported module)}."""
    result: dict[tuple[str, str], set[tuple[str, str]]] = defaultdict(set)
    for path in sorted((ROOT / "mnemo").rglob("*.py")):
        if "migrations" in path.parts:
            continue
        module = _module_name(path)
        for target in _imports(path, module):
            if target == "mnemo":
                continue
            a, b = _package(module), _package(target)
            if a != b:
                result[(a, b)].add((module, target))
    return result


def back_imports() -> list[tuple[str, str]]:
    """The package pairs that import each other, sorted."""
    graph = edges()
    return sorted({tuple(sorted(pair)) for pair in graph if (pair[1], pair[0]) in graph})  # type: ignore[misc]


def main(argv: list[str]) -> int:
    graph = edges()
    pairs = back_imports()
    for a, b in pairs:
        print(f"{a} <-> {b}")
        if "--detail" in argv:
            for x, y in ((a, b), (b, a)):
                for importer, imported in sorted(graph[(x, y)]):
                    print(f"    {importer} -> {imported}")
    print(f"{len(pairs)} back-import(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
