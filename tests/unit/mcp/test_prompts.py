"""The prompts' texts, built by pure functions: remember names the tool and its arguments,
recall lists what was found best first, or says nothing matched."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from mnemo.domain.memory import Memory
from mnemo.mcp.prompts import recall_text, remember_text


def _memory(memory_id: str, content: str) -> Memory:
    at = datetime(2026, 12, 1, tzinfo=UTC)
    return Memory.model_validate({
        "id": memory_id, "project_id": "p", "group": "default", "topic": "UserKnowledge",
        "content": content, "user_id": "ann", "created_at": at, "updated_at": at})  # fmt: skip


def test_remember_asks_for_add_memory_with_the_arguments_as_json() -> None:
    text = remember_text('Ann\'s locker code is "4711"', "ann", "default")
    arguments = json.loads(text.split("arguments: ", 1)[1].split("}. ", 1)[0] + "}")
    assert arguments == {"text": 'Ann\'s locker code is "4711"', "group": "default",
                         "wait_seconds": 10, "user_id": "ann"}  # fmt: skip
    assert "add_memory" in text
    assert "user_id" not in remember_text("The office opens at 8.", None, "team")


def test_recall_lists_the_memories_in_their_order_then_the_question() -> None:
    text = recall_text("Where does Ann sail?", [_memory("m2", "Ann sails in Kiel."),
                                                _memory("m1", "Ann sails dinghies.")])  # fmt: skip
    assert text.index("Ann sails in Kiel.") < text.index("Ann sails dinghies.")
    assert "id m2" in text and "2026-12-01" in text
    assert text.endswith("Question: Where does Ann sail?")


def test_recall_with_nothing_found_says_so() -> None:
    assert "holds no memory that matches" in recall_text("Anything?", [])
