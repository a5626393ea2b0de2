"""Progress files of resumable CLI commands: a small JSON document next to the input."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Self


@dataclass
class ProgressFile:
    """Where a command stands: every line up to `acknowledged_lines` is stored server-side."""

    acknowledged_lines: int = 0

    @classmethod
    def suffix(cls) -> str:
        return ".mnemo-import.json"

    @classmethod
    def path_for(cls, source: Path) -> Path:
        return source.with_name(source.name + cls.suffix())

    @classmethod
    def load(cls, path: Path) -> Self:
        if not path.exists():
            return cls()
        return cls(**json.loads(path.read_text("utf-8")))

    def save(self, path: Path) -> None:
        """Atomically, so a crash never leaves a half-written state file."""
        temporary = path.with_name(path.name + ".tmp")
        temporary.write_text(json.dumps(asdict(self)), "utf-8")
        os.replace(temporary, path)
