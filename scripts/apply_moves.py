"""Rewrite imports after the module moves listed in MOVES.txt (issue 36).

    python scripts/apply_moves.py FILE_OR_DIR...       # rewrite in place
    python scripts/apply_moves.py --check FILE_OR_DIR...  # list what would change, exit 1 if any

MOVES.txt holds one move a line, `old -> new`; `#` starts a comment.
- A module or package move, `mnemo.a.b -> mnemo.c.d`: every dotted mention of the old path
  (and of its submodules) is rewritten, in imports, strings (`python -m ...`, patch targets)
  and docs alike, and so is its file path (`libs/mnemo/a/b.py`); `from mnemo.a import b`
  becomes `from mnemo.c import d as b`.
- A name move, `mnemo.a:Name -> mnemo.c:Name`: `from mnemo.a import Name, Other` becomes two
  imports, and `mnemo.a.Name` in text is rewritten.
Moves apply in file order, so a later line may refine an earlier one. Run `ruff check --fix`
and `ruff format` afterwards to sort the imports it split.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

MOVES_FILE = Path(__file__).resolve().parent.parent / "MOVES.txt"
SUFFIXES = {".py", ".md", ".toml", ".sh", ".yml", ".yaml", ".txt", ".cfg", ".ini", ".json", ""}


@dataclass(frozen=True)
class Move:
    old: str
    new: str
    old_name: str | None = None  # set for a name move
    new_name: str | None = None


def load_moves(path: Path = MOVES_FILE) -> list[Move]:
    moves = []
    for raw in path.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line or "->" not in line:
            continue
        old, new = (part.strip() for part in line.split("->", 1))
        if ":" in old:
            old_mod, old_name = old.split(":", 1)
            new_mod, new_name = new.split(":", 1)
            moves.append(Move(old_mod, new_mod, old_name, new_name))
        else:
            moves.append(Move(old, new))
    return moves


def _dotted(path: str) -> re.Pattern[str]:
    # The path itself or a submodule of it, never a longer name (mnemo.a.b != mnemo.a.bc)
    # nor the tail of another path (mnemo.x.a.b is not mnemo.a.b).
    return re.compile(r"(?<![\w.])" + re.escape(path) + r"(?![\w])")


_FROM_IMPORT = re.compile(
    r"^(?P<indent>[ \t]*)from[ \t]+(?P<module>[\w.]+)[ \t]+import[ \t]+"
    r"(?:\((?P<group>[^)]*)\)|(?P<line>[^\n#]*?))[ \t]*(?P<comment>#[^\n]*)?$",
    re.MULTILINE,
)


def _names(text: str) -> list[str]:
    return [n.strip() for n in re.split(r"[,\n]", re.sub(r"#[^\n]*", "", text)) if n.strip()]


def _render(indent: str, module: str, names: list[str], comment: str | None) -> str:
    line = f"{indent}from {module} import {', '.join(names)}"
    if comment:
        line += f"  {comment}"
    return line


def _apply_module_move(text: str, move: Move) -> str:
    old_parent, _, old_leaf = move.old.rpartition(".")
    new_parent, _, new_leaf = move.new.rpartition(".")

    def from_parent(match: re.Match[str]) -> str:
        # `from <old parent> import <old leaf>[ as x], other`: the leaf moves to the new parent.
        if match["module"] != old_parent:
            return match[0]
        names = _names(match["group"] or match["line"] or "")
        moved = [n for n in names if n.split(" as ")[0].strip() == old_leaf]
        if not moved:
            return match[0]
        kept = [n for n in names if n not in moved]
        renamed = [
            new_leaf + (f" as {n.split(' as ')[1].strip()}" if " as " in n else "")
            if new_leaf == old_leaf or " as " in n
            else f"{new_leaf} as {old_leaf}"
            for n in moved
        ]
        out = []
        if kept:
            out.append(_render(match["indent"], old_parent, kept, match["comment"]))
        out.append(
            _render(match["indent"], new_parent, renamed, None if kept else match["comment"])
        )
        return "\n".join(out)

    if old_parent:
        text = _FROM_IMPORT.sub(from_parent, text)
    text = _dotted(move.old).sub(move.new, text)
    # File paths in docs and comments: libs/mnemo/a/b.py, tests/unit/a/.
    slashed = re.compile(r"(?<![\w.])" + re.escape(move.old.replace(".", "/")) + r"(?![\w])")
    return slashed.sub(move.new.replace(".", "/"), text)


def _apply_name_move(text: str, move: Move) -> str:
    assert move.old_name and move.new_name

    def from_module(match: re.Match[str]) -> str:
        if match["module"] != move.old:
            return match[0]
        names = _names(match["group"] or match["line"] or "")
        moved = [n for n in names if n.split(" as ")[0].strip() == move.old_name]
        if not moved:
            return match[0]
        kept = [n for n in names if n not in moved]
        renamed = [
            move.new_name + (f" as {n.split(' as ')[1].strip()}" if " as " in n else "")
            if move.new_name == move.old_name or " as " in n
            else f"{move.new_name} as {move.old_name}"
            for n in moved
        ]
        out = []
        if kept:
            out.append(_render(match["indent"], move.old, kept, match["comment"]))
        out.append(_render(match["indent"], move.new, renamed, None if kept else match["comment"]))
        return "\n".join(out)

    text = _FROM_IMPORT.sub(from_module, text)
    dotted = re.compile(r"(?<![\w.])" + re.escape(f"{move.old}.{move.old_name}") + r"(?![\w])")
    return dotted.sub(f"{move.new}.{move.new_name}", text)


def rewrite(text: str, moves: list[Move]) -> str:
    for move in moves:
        text = _apply_name_move(text, move) if move.old_name else _apply_module_move(text, move)
    return text


def _files(args: list[str]) -> list[Path]:
    out: list[Path] = []
    for arg in args:
        path = Path(arg)
        if path.is_dir():
            out.extend(
                p
                for p in sorted(path.rglob("*"))
                if p.is_file()
                and p.suffix in SUFFIXES
                and not any(part.startswith(".") or part == "node_modules" for part in p.parts)
            )
        elif path.is_file():
            out.append(path)
    # Never this script nor the list itself: they name the old paths on purpose.
    return [p for p in out if p.resolve() not in (Path(__file__).resolve(), MOVES_FILE)]


def main(argv: list[str]) -> int:
    check = "--check" in argv
    args = [a for a in argv if a != "--check"]
    if not args:
        print(__doc__)
        return 2
    moves = load_moves()
    changed = []
    for path in _files(args):
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        new = rewrite(text, moves)
        if new != text:
            changed.append(path)
            if not check:
                path.write_text(new)
    for path in changed:
        print(("would rewrite " if check else "rewrote ") + str(path))
    return 1 if check and changed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
