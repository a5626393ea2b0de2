"""`mnemo import --memories` without a server: reading an export, batching it, and halving
a batch the server finds too large."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer

from mnemo.cli.restore import batches, read_export, send
from mnemo.client.errors import ValidationError


def _export(path: Path, memories: int, end: bool = True) -> Path:
    lines = [{"kind": "header", "format": "mnemo-export", "version": 1, "memories": memories}]
    lines += [{"kind": "group", "name": g, "config": {}} for g in ("a", "b")]
    lines += [{"kind": "memory", "id": f"m{i}", "content": "x" * 50} for i in range(memories)]
    lines += [{"kind": "end", "memories": memories}] if end else []
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    return path


def test_groups_come_alone_then_memories_in_batches_by_count_and_size(tmp_path: Path) -> None:
    source = _export(tmp_path / "e.jsonl", 5)
    found = [(kind, [r.get("id") or r["name"] for r in rs], last) for kind, rs, last in batches(source, 0, 10_000, 2)]  # fmt: skip
    assert found == [
        ("group", ["a", "b"], 3),
        ("memory", ["m0", "m1"], 5),
        ("memory", ["m2", "m3"], 7),
        ("memory", ["m4"], 9),  # through the end line
    ]
    by_size = list(batches(source, 0, 150, 100))  # a memory line is ~90 bytes
    assert [len(rs) for kind, rs, _ in by_size if kind == "memory"] == [1, 1, 1, 1, 1]
    resumed = list(batches(source, 5, 10_000, 2))  # after the second memory's line
    assert [[r["id"] for r in rs] for _, rs, _ in resumed] == [["m2", "m3"], ["m4"]]


def test_an_unfinished_or_foreign_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(typer.BadParameter, match="unfinished export"):
        read_export(_export(tmp_path / "cut.jsonl", 3, end=False))
    other = tmp_path / "other.jsonl"
    other.write_text('{"messages": []}\n', "utf-8")
    with pytest.raises(typer.BadParameter, match="not a mnemo export"):
        read_export(other)
    header, lines = read_export(_export(tmp_path / "ok.jsonl", 3))
    assert header["memories"] == 3 and lines == 7


class SmallServer:
    """Refuses a body of more than `most` memories with 413, as a low body limit does."""

    def __init__(self, most: int) -> None:
        self.most = most
        self.sizes: list[int] = []

    def import_batch(self, body: dict[str, Any]) -> dict[str, Any]:
        count = len(body["memories"])
        if count > self.most:
            raise ValidationError(413, {"detail": "the request body is too large"})
        self.sizes.append(count)
        return {"imported": count}


def test_a_batch_too_large_for_the_server_is_halved_until_it_fits() -> None:
    server = SmallServer(most=2)
    records = [{"id": f"m{i}"} for i in range(7)]
    reports = send(server, None, "memories", records)  # type: ignore[arg-type]
    assert sum(r["imported"] for r in reports) == 7 and max(server.sizes) <= 2
    with pytest.raises(ValidationError):  # one memory over the limit: nothing to halve
        send(SmallServer(most=0), None, "memories", records[:1])  # type: ignore[arg-type]
