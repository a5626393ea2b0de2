"""Text the store cannot hold, found with its location in a decoded JSON document.

Postgres text and JSONB refuse NUL characters, and UTF-8 cannot encode an unpaired UTF-16
surrogate (JSON's `"\\ud800"` decodes to one in Python). Either would fail deep inside a
write, so requests holding them are refused up front, naming where.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from mnemo.errors import MnemoError

Location = tuple[str | int, ...]

NUL_MESSAGE = "text must not contain NUL (\\u0000) characters"
SURROGATE_MESSAGE = "text must not contain unpaired UTF-16 surrogates (e.g. \\ud800)"


class TooDeep(MnemoError, ValueError):
    """A document nested deeper than allowed; `location` is the first container too deep."""

    def __init__(self, location: Location, max_depth: int) -> None:
        super().__init__(f"nested deeper than {max_depth} levels")
        self.location = location
        self.max_depth = max_depth


def text_problem(value: str) -> str | None:
    """Why the store cannot hold `value`, or None."""
    if "\x00" in value:
        return NUL_MESSAGE
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return SURROGATE_MESSAGE
    return None


# A location while walking: (parent, key, depth), so a step down costs O(1), not a copy.
_Node = tuple[Any, str | int, int] | None


def _location(node: _Node) -> Location:
    parts: list[str | int] = []
    while node is not None:
        node, key, _ = node
        parts.append(key)
    return tuple(reversed(parts))


def bad_text(document: Any, max_depth: int | None = None) -> Iterator[tuple[Location, str]]:
    """(location, message) of every string or mapping key the store cannot hold, in
    document order; a bad key is reported at its mapping. Iterative and linear, so any
    depth is safe; with `max_depth`, raises TooDeep at the first container nested deeper."""
    stack: list[tuple[_Node, Any]] = [(None, document)]
    while stack:
        node, value = stack.pop()
        if isinstance(value, str):
            problem = text_problem(value)
            if problem is not None:
                yield _location(node), problem
            continue
        if not isinstance(value, dict | list | tuple):
            continue
        depth = node[2] if node is not None else 0
        if max_depth is not None and depth >= max_depth:
            raise TooDeep(_location(node), max_depth)
        children: list[tuple[_Node, Any]]
        if isinstance(value, dict):
            children = []
            for key, item in value.items():
                key_problem = text_problem(key) if isinstance(key, str) else None
                if key_problem is not None:
                    yield _location(node), key_problem
                children.append(((node, str(key), depth + 1), item))
        else:
            children = [((node, index, depth + 1), item) for index, item in enumerate(value)]
        stack.extend(reversed(children))


def refuse_unstorable_text(document: Any) -> Any:
    """Raise ValueError naming the first string the store cannot hold; else return as is."""
    for location, problem in bad_text(document):
        where = ".".join(str(part) for part in location)
        raise ValueError(f"{problem} (at {where})" if where else problem)
    return document
