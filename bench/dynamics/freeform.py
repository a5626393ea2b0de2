"""The free-form family (issue 32): changes told the way people tell them, not as
"I <verb> X now".

Written from scratch for this bench. Each attribute states its first value plainly, then
changes, restatements and corrections in loose everyday phrasing: "I sold my Golf and bought
a Corolla", "I gave up on piano, I'm learning Spanish now", "we finally moved to Vienna",
"I switched from Vim to Helix". `memory` is what an exact extraction stores (the oracle's
answer and the judge's vocabulary); `question` is what the agent asks later.
"""

from __future__ import annotations

FREEFORM: dict[str, dict[str, object]] = {
    "car": {
        "values": ["Golf", "Corolla", "Civic", "Fiesta", "Clio", "Fabia", "Mazda 3", "Yaris"],
        "said": "I drive a {v}.",
        "changed": "I sold my {old} and bought a {v}.",
        "restated": "Still driving the {v}, it runs fine.",
        "corrected": "Sorry, my mistake: the car is a {v}, not a {old}.",
        "memory": "User drives a {v}.", "question": "What car does the user drive?",
    },
    "learning": {
        "values": ["piano", "Spanish", "pottery", "chess", "Japanese", "the cello", "salsa",
                   "woodworking"],
        "said": "These days I'm learning {v}.",
        "changed": "I gave up on {old}, I'm learning {v} now.",
        "restated": "I'm still learning {v}, slowly.",
        "corrected": "Oops, not {old}. It's {v} I'm learning.",
        "memory": "User is learning {v}.", "question": "What is the user learning?",
    },
    "home": {
        "values": ["Vienna", "Prague", "Tallinn", "Riga", "Athens", "Oslo", "Ljubljana",
                   "Valencia"],
        "said": "I live in {v} with my partner.",
        "changed": "We finally moved to {v}!",
        "restated": "Home is still {v}.",
        "corrected": "No wait, we moved to {v}, not {old}.",
        "memory": "User lives in {v}.", "question": "Which city does the user live in?",
    },
    "editor": {
        "values": ["Vim", "Emacs", "Sublime", "IntelliJ", "Helix", "Kate", "Notepad++", "Xcode"],
        "said": "I write all my code in {v}.",
        "changed": "I switched from {old} to {v}.",
        "restated": "Yep, {v} is still my editor.",
        "corrected": "Correction: my editor is {v}, not {old}.",
        "memory": "User writes code in {v}.", "question": "Which editor does the user code in?",
    },
}  # fmt: skip

# Per attribute, the events after the first statement, in order (interleaved by the seed).
FREEFORM_STREAMS: list[list[tuple[str, str]]] = [
    [("change", "car"), ("restate", "car")],
    [("restate", "learning"), ("change", "learning")],
    [("change", "home"), ("restate", "home"), ("correct", "home")],
    [("change", "editor"), ("restate", "editor")],
]
