"""Service shells stay thin: consume, call a stage, produce (issue 36: at most 60 lines)."""

from __future__ import annotations

from pathlib import Path

import pytest

SERVICES = Path(__file__).resolve().parents[2] / "services"
SHELLS = sorted([*SERVICES.glob("*/app.py"), *SERVICES.glob("*/main.py")])


@pytest.mark.parametrize("shell", SHELLS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_service_shell_is_at_most_60_lines(shell: Path) -> None:
    lines = len(shell.read_text().splitlines())
    assert lines <= 60, f"{shell} has {lines} lines: move its logic into mnemo.kafka"


def test_every_service_has_a_shell() -> None:
    assert {p.parent.name for p in SHELLS} >= {"buffer", "committer", "extractor", "gateway"}
