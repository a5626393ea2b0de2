"""mkdocs hooks: the reference pages are generated from the code at every build
(scripts/docs_reference.py), never committed, so they cannot go stale."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent.parent
for entry in (ROOT / "libs", ROOT):
    if str(entry) not in sys.path:
        sys.path.insert(0, str(entry))


def on_files(files: Files, config: Any) -> Files:
    from scripts import docs_reference

    for uri, render in docs_reference.PAGES.items():
        files.append(File.generated(config, uri, content=render()))
    return files
