"""The runnable examples of README.md and docs/**/*.md: every fenced ```python and ```bash
block, unless its page or the block itself says it is run elsewhere or cannot run here.

- A page whose first line is `<!-- examples: tested by tests/... -->` is skipped whole: a
  dedicated test runs its examples.
- A block right after a `<!-- not-run: reason -->` line (blank lines between allowed) is
  skipped, with its reason: use it sparingly, for what needs a real OpenAI key, a Kafka
  broker, or starts a long-running server.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LANGUAGES = ("python", "bash")
TESTED_ELSEWHERE = re.compile(r"^<!--\s*examples:\s*tested by\s+(?P<where>.+?)\s*-->")
NOT_RUN = re.compile(r"^<!--\s*not-run:\s*(?P<reason>.+?)\s*-->\s*$")
FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>```+|~~~+)\s*(?P<lang>[\w+-]*)")


@dataclass(frozen=True)
class Block:
    page: Path  # relative to the repository
    line: int  # 1-based line of the opening fence
    language: str
    code: str
    not_run: str | None  # the reason, when marked

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def pages(root: Path = ROOT) -> list[Path]:
    """README.md, then docs/**/*.md in path order."""
    found = [root / "README.md", *sorted((root / "docs").rglob("*.md"))]
    return [p for p in found if p.is_file()]


def page_tested_by(text: str) -> str | None:
    first = text.splitlines()[0] if text else ""
    match = TESTED_ELSEWHERE.match(first.strip())
    return match["where"] if match else None


def blocks_of(text: str, page: Path) -> list[Block]:
    """The fenced blocks of one page, in order (every language; callers filter)."""
    lines = text.splitlines()
    found: list[Block] = []
    reason: str | None = None
    index = 0
    while index < len(lines):
        line = lines[index]
        marker = NOT_RUN.match(line.strip())
        fence = FENCE.match(line)
        if marker:
            reason = marker["reason"]
        elif fence:
            start, closing, indent = index, fence["fence"], len(fence["indent"])
            body: list[str] = []
            index += 1
            while index < len(lines) and not lines[index].strip().startswith(closing):
                body.append(
                    lines[index][indent:] if lines[index][:indent].isspace() else lines[index]
                )
                index += 1
            code = "\n".join(body) + "\n"
            found.append(Block(page, start + 1, fence["lang"].lower(), code, reason))
            reason = None
        elif line.strip():
            reason = None  # a marker applies to the very next block only
        index += 1
    return found


def runnable_blocks(root: Path = ROOT) -> list[Block]:
    """Every python and bash block of the pages not tested elsewhere (marked ones included,
    so that a skip shows with its reason)."""
    result: list[Block] = []
    for path in pages(root):
        text = path.read_text(encoding="utf-8")
        if page_tested_by(text):
            continue
        relative = path.relative_to(root)
        result += [b for b in blocks_of(text, relative) if b.language in LANGUAGES]
    return result
