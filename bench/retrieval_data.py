"""The two retrieval development sets, as documents per user and questions with evidence.

- BEAM-128K (Tavakoli et al., "Beyond a Million Tokens: Benchmarking and Enhancing Long-Term
  Memory in LLMs"): one user per chat, one document per message (its `->-> b,t` marker
  stripped), evidence = the question's `source_chat_ids`; categories are the abilities.
- LoCoMo dev (Maharana et al., "Evaluating Very Long-Term Conversational Memory of LLM Agents",
  ACL 2024; CC BY-NC 4.0, research and evaluation only): one user per conversation, one
  document per turn, text `"[<session date>] <speaker>: <text>"` plus
  `" [shares image: <caption>]"`; evidence = the question's dia_ids, normalised (`D:1:3`,
  several ids in one string) and kept only if they exist; categories 1 multi-hop,
  2 temporal, 3 open-domain, 4 single-hop, 5 adversarial.

Both are described in shared/data/README.md. The data stays outside the repository.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.common import ROOT

_BEAM_MARKER = re.compile(r"\s*->->\s*\d+,\d+\s*$")
_DIA_ID = re.compile(r"D:?(\d+):(\d+)")
LOCOMO_CATEGORIES = {
    1: "1-multi-hop",
    2: "2-temporal",
    3: "3-open-domain",
    4: "4-single-hop",
    5: "5-adversarial",
}


@dataclass(frozen=True)
class Question:
    user: str
    text: str
    evidence: frozenset[str]
    category: str


@dataclass(frozen=True)
class Origin:
    """Where a document was said: its session (one run of the memory service) and when."""

    session: str
    time: datetime


@dataclass
class Dataset:
    name: str
    # user -> [(document id, text)], in conversation order
    documents: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    questions: list[Question] = field(default_factory=list)
    # (user, document id) -> its session and event time
    origins: dict[tuple[str, str], Origin] = field(default_factory=dict)

    @property
    def document_count(self) -> int:
        return sum(len(docs) for docs in self.documents.values())


def shared_data() -> Path:
    """`shared/data` beside the checkout (or beside the folder of worktrees)."""
    for parent in ROOT.parents:
        candidate = parent / "shared" / "data"
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("no shared/data folder above the repository; pass --data")


def _beam_evidence(refs: Any) -> set[str]:
    ids: set[str] = set()
    stack: list[Any] = [] if refs is None else [refs]
    while stack:  # ints, lists of ints, dicts of lists, and nestings of those
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        else:
            ids.add(str(int(item)))
    return ids


def beam(folder: Path, chats: int | None = None) -> Dataset:
    data = Dataset("beam-128k" if chats is None else f"beam-128k-first{chats}")
    chat_dirs = sorted((p for p in folder.iterdir() if p.is_dir()), key=lambda p: int(p.name))
    for chat_dir in chat_dirs[:chats]:
        user = f"beam-{chat_dir.name}"
        docs = data.documents.setdefault(user, [])
        for batch in json.loads((chat_dir / "chat.json").read_text()):
            for turn in batch["turns"]:
                for message in turn:
                    content = _BEAM_MARKER.sub("", message["content"]).strip()
                    if content:
                        docs.append((str(message["id"]), content))
                        # BEAM dates almost no message: a minute apart, in a year no
                        # question names, so a time window never matches by accident.
                        data.origins[(user, str(message["id"]))] = Origin(
                            f"{user}-{batch['batch_number']}",
                            BEAM_EPOCH + timedelta(minutes=len(docs)),
                        )
        questions = json.loads((chat_dir / "probing_questions.json").read_text())
        for ability, items in questions.items():
            for item in items:
                evidence = _beam_evidence(item.get("source_chat_ids"))
                if evidence:  # abstention questions have none
                    data.questions.append(
                        Question(user, item["question"], frozenset(evidence), ability)
                    )
    return data


BEAM_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)
_SESSION_DATE = re.compile(r"(\d{1,2}):(\d{2})\s*([ap]m) on (\d{1,2}) (\w+),? (\d{4})", re.I)


def locomo_date(text: str) -> datetime:
    """`"1:56 pm on 8 May, 2023"` as a UTC datetime."""
    match = _SESSION_DATE.search(text)
    if match is None:
        raise ValueError(f"unknown LoCoMo session date {text!r}")
    hour, minute, half, day, month, year = match.groups()
    hour_24 = int(hour) % 12 + (12 if half.lower() == "pm" else 0)
    month_number = datetime.strptime(month[:3], "%b").month
    return datetime(int(year), month_number, int(day), hour_24, int(minute), tzinfo=UTC)


def locomo_text(session_date: str, turn: dict[str, Any]) -> str:
    text = f"[{session_date}] {turn['speaker']}: {turn['text']}"
    if turn.get("blip_caption"):
        text += f" [shares image: {turn['blip_caption']}]"
    return text


def locomo(path: Path, conversations: int | None = None) -> Dataset:
    data = Dataset("locomo-dev")
    for sample in json.loads(path.read_text())[:conversations]:
        user = f"locomo-{sample['sample_id']}"
        conversation = sample["conversation"]
        docs = data.documents.setdefault(user, [])
        session = 1
        while f"session_{session}" in conversation:
            date = conversation[f"session_{session}_date_time"]
            start = locomo_date(date)
            for n, turn in enumerate(conversation[f"session_{session}"]):
                docs.append((turn["dia_id"], locomo_text(date, turn)))
                # a turn a minute: the session's order, on the session's date
                data.origins[(user, turn["dia_id"])] = Origin(
                    f"{user}-{session}", start + timedelta(minutes=n)
                )
            session += 1
        known = {doc_id for doc_id, _ in docs}
        for item in sample["qa"]:
            evidence = {
                f"D{s}:{t}"
                for ref in item.get("evidence", [])
                for s, t in _DIA_ID.findall(ref)
                if f"D{s}:{t}" in known
            }
            if evidence:
                category = LOCOMO_CATEGORIES.get(item["category"], str(item["category"]))
                data.questions.append(
                    Question(user, item["question"], frozenset(evidence), category)
                )
    return data
