"""Checking a Grafana dashboard's PromQL against the series a test scraped.

Not a PromQL engine: it finds every metric selector in an expression (name and label
matchers) and every `by (...)` / `without (...)` label, so a test can assert that each
selector matches a scraped sample and each grouping label exists on the series it groups.
A renamed metric or label then fails the test instead of leaving a blank panel.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

AGGREGATIONS = frozenset(
    "sum min max avg group stddev stdvar count count_values bottomk topk quantile limitk "
    "limit_ratio".split()
)
GROUPING = frozenset({"by", "without", "on", "ignoring", "group_left", "group_right"})
KEYWORDS = frozenset({"and", "or", "unless", "bool", "offset", "atan2"}) | GROUPING | AGGREGATIONS
_IDENT = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_NUMBER = re.compile(r"\d+(?:\.\d+)?(?:e[+-]?\d+)?|\.\d+")
_MATCHER = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"\s*,?')
_VARIABLE = re.compile(r"\$\{?[a-zA-Z_][a-zA-Z0-9_]*\}?")

Sample = tuple[str, dict[str, str]]


@dataclass(frozen=True)
class Selector:
    metric: str
    matchers: tuple[tuple[str, str, str], ...] = ()  # (label, op, value)

    def matches(self, sample: Sample) -> bool:
        name, labels = sample
        return name == self.metric and all(
            _match(labels.get(label, ""), op, value) for label, op, value in self.matchers
        )


@dataclass
class Parsed:
    selectors: list[Selector] = field(default_factory=list)
    grouping: set[str] = field(default_factory=set)


def _match(actual: str, op: str, value: str) -> bool:
    if op == "=":
        return actual == value
    if op == "!=":
        return actual != value
    found = re.fullmatch(value, actual) is not None
    return found if op == "=~" else not found


def parse(expr: str) -> Parsed:
    """The selectors and grouping labels of one PromQL expression (dashboard variables are
    read as numbers)."""
    text = _VARIABLE.sub("1", expr)
    out = Parsed()
    i = 0
    while i < len(text):
        c = text[i]
        if c == '"':
            i = text.index('"', i + 1) + 1
        elif c == "[":
            i = text.index("]", i) + 1
        elif (number := _NUMBER.match(text, i)) and not _IDENT.match(text, i):
            i = number.end()
        elif ident := _IDENT.match(text, i):
            i = _after_ident(text, ident.group(), ident.end(), out)
        else:
            i += 1
    return out


def _after_ident(text: str, name: str, i: int, out: Parsed) -> int:
    rest = text[i:].lstrip()
    skipped = len(text) - i - len(rest)
    if name in GROUPING and rest.startswith("("):
        close = text.index(")", i)
        out.grouping |= {x.strip() for x in text[i + skipped + 1 : close].split(",") if x.strip()}
        return close + 1
    if name in KEYWORDS or rest.startswith("("):
        return i  # an operator or a function call
    matchers: list[tuple[str, str, str]] = []
    if rest.startswith("{"):
        start = i + skipped + 1
        close = text.index("}", start)
        body, pos = text[start:close], 0
        while pos < len(body.rstrip()):
            m = _MATCHER.match(body, pos)
            assert m, f"cannot read the label matchers {{{body}}}"
            matchers.append((m.group(1), m.group(2), m.group(3)))
            pos = m.end()
        i = close + 1
    out.selectors.append(Selector(name, tuple(matchers)))
    return i


def scraped(text: str) -> list[Sample]:
    """Every sample of a Prometheus exposition, as (sample name, labels)."""
    return [
        (s.name, dict(s.labels))
        for family in text_string_to_metric_families(text)
        for s in family.samples
    ]


def dashboard_rows(path: Path) -> dict[str, list[dict[str, object]]]:
    """The dashboard's panels by the title of the row they sit under ("" before any row);
    a collapsed row's panels are its own."""
    rows: dict[str, list[dict[str, object]]] = {"": []}
    current = ""
    for panel in json.loads(path.read_text())["panels"]:
        if panel.get("type") == "row":
            current = str(panel["title"])
            rows[current] = list(panel.get("panels") or [])
        else:
            rows[current].append(panel)
    return rows


def expressions(panels: Iterable[dict[str, object]]) -> Iterator[tuple[str, str]]:
    """(panel title, PromQL) of every target."""
    for panel in panels:
        for target in panel.get("targets") or []:  # type: ignore[attr-defined]
            yield str(panel["title"]), str(target["expr"])


def problems(panels: Iterable[dict[str, object]], samples: list[Sample]) -> list[str]:
    """What in the panels' PromQL the scraped samples do not have: selectors matching no
    sample, grouping labels absent from the series they group."""
    found = []
    for title, expr in expressions(panels):
        parsed = parse(expr)
        if not parsed.selectors:
            found.append(f"{title}: no metric in {expr!r}")
        for selector in parsed.selectors:
            if not any(selector.matches(s) for s in samples):
                found.append(f"{title}: no scraped sample matches {selector}")
        names = {s.metric for s in parsed.selectors}
        labels = {k for name, ls in samples if name in names for k in ls}
        found += [f"{title}: label {g!r} not on {sorted(names)}" for g in parsed.grouping - labels]
    return found
