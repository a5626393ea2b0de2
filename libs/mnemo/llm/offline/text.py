"""Sentence heuristics for the offline provider: split, filter, and rewrite in third person.

These are deterministic regular-expression heuristics, not language understanding. They turn
"Hey, I work from home and my dog is called Rex." into "User works from home and User's dog is
called Rex." and drop questions, greetings, small talk and short fragments.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date

from mnemo.llm.offline.dates import resolve_relative_dates
from mnemo.llm.offline.verbs import ADVERBS, third_person

MIN_WORDS = 3
_CONVERSATION_ROLES = frozenset({"user", "assistant", "system", "tool", "developer"})
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
# "I work from home and I'm an engineer" holds two facts: split before a new "I"/"my" clause
# (after "and", "but", "so", "also", a comma or a semicolon).
_CLAUSE_SPLIT = re.compile(
    r"(?:(?:\s*,\s*|\s+)(?:and|but|so|also)\s+|\s*[,;]\s*|\s+-+\s+)"
    r"(?=(?:i|i'm|i've|i'd|i'll|my)\b)",
    re.IGNORECASE,
)
# A reason or consequence that says nothing about the user ("..., so the food here is hard")
# is context, not a statement of theirs: it is dropped rather than glued to the fact.
_CONTEXT_TAIL = re.compile(
    r"\s*[,;]?\s+(?:so|because|since|which|though|although)\s+(?!.*\b(?:i|i'm|my|me)\b).*$",
    re.IGNORECASE,
)
# Discourse markers inside a sentence ("I live in Porto, by the way."): no part of the fact.
_ASIDE = re.compile(
    r"(?:\s*,\s*|\s+)(?:by the way|btw|as i said|as i mentioned|as you know|you know|anyway)"
    r"\b(?=\s*(?:[,.!;]|$))",
    re.IGNORECASE,
)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|my|me)\b", re.IGNORECASE)
# A time adverbial in front ("These days I'm learning piano") goes behind the statement, where
# it reads as it did: "User is learning piano these days."
_LEADING_TIME = re.compile(
    r"^(?P<when>these days|nowadays|lately|currently|right now|at the moment)\s*,?\s+(?P<rest>.+?)"
    r"(?P<end>[.!]*)$",
    re.IGNORECASE,
)
# A headline before the news: "Big news:", "Quick update -", "Fun fact:".
_HEADLINE = re.compile(
    r"^(?:[a-z']+\s+){0,2}(?:news|update|fact|announcement)\s*(?:[:!,;]+|\s-+)\s*",
    re.IGNORECASE,
)
# An introduction gives the user's name: "Hi, I'm Maria." / "Call me Maria."
_INTRODUCTION = re.compile(
    r"^(?i:(?:hi|hello|hey)(?:\s+there)?\s*[,!.]*\s*(?:i'm|i am)|call me|this is)\s+"
    r"(?P<name>[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)?)\s*[.!]*$"
)
_TOOL_CALL = re.compile(r"\[tool call [^\]]*\]")
_INTERJECTION = re.compile(
    r"^(?:(?:great news|good news|bad news|by the way|just so you know|hey there|hi there|"
    r"hello there|hey|hi|hello|actually|btw|fyi|anyway|anyways|also|oh|um|uh|hmm|alright|"
    r"honestly|basically|yeah|yep|yup|yes|nope|okay|ok|well|so|and|but|please|no wait|wait|"
    r"oops|sorry|my mistake|my bad|correction|to be clear)"
    r"(?:\s*[,!:;.\-]+\s*|\s+(?=(?:i|i'm|i've|i'd|i'll|my|we|our)\b)))+",
    re.IGNORECASE,
)
# A restatement's discourse marker ("As I said, I live in Porto."): the fact is the rest,
# so a restated fact reads exactly as it did the first time.
_RESTATEMENT = re.compile(
    r"^(?:(?:as|like)\s+(?:i|i've)\s+(?:said|told you|mentioned|explained|wrote)"
    r"(?:\s+(?:before|earlier))?|as\s+(?:always|usual|before|mentioned)|as you know|again)"
    r"\s*,\s*",
    re.IGNORECASE,
)
_REMEMBER = re.compile(
    r"^(?:please\s+)?(?:remember|note|keep in mind|don't forget)(?:\s+that)?\s*[:,]?\s+",
    re.IGNORECASE,
)
_SMALL_TALK = re.compile(
    r"^(?:hi|hello|hey|thanks|thank you|thx|ty|cheers|bye|goodbye|"
    r"good (?:morning|afternoon|evening|night)|nice to meet you|how are you|how's it going|"
    r"see you|have a (?:nice|good|great)|"
    r"you're welcome|no problem|no worries|sounds good|lol|haha|ok|okay|sure|cool|awesome|"
    r"that's (?:great|cool|awesome|helpful|nice|perfect|amazing|all))\b",
    re.IGNORECASE,
)
_QUESTION_START = re.compile(
    r"^(?:can|could|would|will|should|shall|do|does|did|is|are|am|may|might|isn't|aren't|"
    r"don't|doesn't)\s+(?:you|i|it|we|they|there|this|that)\b",
    re.IGNORECASE,
)
_REQUEST_START = re.compile(
    r"^(?:tell|show|give|help|explain|write|find|search|list|summarize|summarise|translate|"
    r"generate|create|recommend|suggest|let's|lets)\b",
    re.IGNORECASE,
)


def user_texts(units: list[str], input_type: str) -> list[tuple[int, str]]:
    """The user's own text with its unit's index: user-role lines of a conversation, or
    every plain string."""
    if input_type != "conversation":
        return [(i, u) for i, u in enumerate(units) if u.strip()]
    out = []
    for index, unit in enumerate(units):
        role, sep, content = unit.partition(":")
        if sep and role.strip().lower() in _CONVERSATION_ROLES:
            if role.strip().lower() == "user":
                out.append((index, content))
        else:
            out.append((index, unit))  # no role prefix: treat as the user's own text
    return out


def split_sentences(text: str | None) -> list[str]:
    """Sentences of `text`, split at . ! ? followed by whitespace, and at line breaks."""
    if not text:
        return []
    text = _TOOL_CALL.sub(" ", text.replace("\u2019", "'"))
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


def strip_preamble(sentence: str) -> str:
    """Drop leading interjections ("Great news," "Hey," "So"), restatement markers ("As I
    said,") and "remember that"."""
    previous = None
    while previous != sentence:
        previous = sentence
        sentence = _HEADLINE.sub("", sentence).strip()
        sentence = _INTERJECTION.sub("", sentence).strip()
        sentence = _RESTATEMENT.sub("", sentence).strip()
        sentence = _REMEMBER.sub("", sentence).strip()
    return sentence


def is_noise(sentence: str, keep_requests: bool = False) -> bool:
    """Questions, greetings, small talk, tool output and (optionally) requests to the agent."""
    stripped = sentence.strip()
    if not stripped or stripped.endswith("?") or "{" in stripped or "}" in stripped:
        return True
    if _SMALL_TALK.match(stripped) or _QUESTION_START.match(stripped):
        return True
    return not keep_requests and bool(_REQUEST_START.match(stripped))


def facts(units: list[str], input_type: str, keep_requests: bool = False) -> list[str]:
    """Every candidate fact of one input, rewritten as "User ..." sentences, in order."""
    return [fact for fact, _ in sourced_facts(units, input_type, keep_requests)]


def sourced_facts(
    units: list[str],
    input_type: str,
    keep_requests: bool = False,
    written_on: Sequence[date] | None = None,
) -> list[tuple[str, int]]:
    """`facts`, each with the index of the unit it came from. With `written_on` (each
    unit's date), relative dates are resolved against the date of their own unit."""
    out = []
    for index, text in user_texts(units, input_type):
        for raw in split_sentences(text):
            introduced = _INTRODUCTION.match(raw.strip())
            if introduced:
                out.append((f"User's name is {introduced.group('name')}.", index))
                continue
            for clause in clauses(raw):
                fact = _fact(clause, keep_requests)
                if fact and written_on is not None:
                    fact = resolve_relative_dates(fact, written_on[index])
                if fact:
                    out.append((fact, index))
    return out


def clauses(sentence: str) -> list[str]:
    """The statements of one sentence: preamble and asides dropped, split before each new
    first-person clause, a trailing reason that is not about the user cut off."""
    text = _ASIDE.sub("", strip_preamble(sentence))
    when = _LEADING_TIME.match(text)
    if when:
        text = f"{when.group('rest')} {when.group('when').lower()}{when.group('end')}"
    parts: list[str] = []
    for piece in _CLAUSE_SPLIT.split(text):
        # "As a nurse, I work nights": a lead-in without a first person is no statement.
        if parts and not _FIRST_PERSON.search(parts[-1]):
            parts[-1] = f"{parts[-1]}, {piece}"
        elif piece.strip():
            parts.append(piece)
    return [_CONTEXT_TAIL.sub("", c) for c in parts]


def _fact(clause: str, keep_requests: bool) -> str | None:
    sentence = strip_preamble(clause)
    if is_noise(sentence, keep_requests):
        return None
    rewritten = to_third_person(sentence)
    return rewritten if len(rewritten.split()) >= MIN_WORDS else None


_FIXED_FORMS: list[tuple[str, str]] = [
    (r"i'm not|i am not", "User is not"),
    (r"i'm|i am", "User is"),
    (r"i haven't|i have not|i've not", "User has not"),
    (r"i've|i have", "User has"),
    (r"i wasn't|i was not", "User was not"),
    (r"i was", "User was"),
    (r"i don't|i do not|i dont", "User does not"),
    (r"i didn't|i did not|i didnt", "User did not"),
    (r"i can't|i cannot|i can not|i cant", "User cannot"),
    (r"i won't|i will not", "User will not"),
    (r"i'll", "User will"),
    (r"i'd", "User would"),
]
_FIXED = [(re.compile(rf"\b(?:{p})\b", re.IGNORECASE), r) for p, r in _FIXED_FORMS]
_I_VERB = re.compile(
    r"\bi\s+((?:(?:" + "|".join(sorted(ADVERBS)) + r")\s+)*)([a-z]+)\b", re.IGNORECASE
)
_LONE_I = re.compile(r"\bi\b(?!\.)", re.IGNORECASE)
_MY_START = re.compile(r"^my\b", re.IGNORECASE)
_MY = re.compile(r"\b(?:my|mine)\b", re.IGNORECASE)
_MYSELF = re.compile(r"\bmyself\b", re.IGNORECASE)
_ME = re.compile(r"\bme\b", re.IGNORECASE)


def _i_verb(match: re.Match[str]) -> str:
    adverbs = match.group(1).lower()
    return f"User {adverbs}{third_person(match.group(2).lower())}"


def to_third_person(sentence: str) -> str:
    """Rewrite first person as "User": "I work from home" -> "User works from home.".

    Pure pattern substitution, so e.g. "we" and "our" stay as they are.
    """
    text = sentence.replace("\u2019", "'").strip()
    for pattern, replacement in _FIXED:
        text = pattern.sub(replacement, text)
    text = _I_VERB.sub(_i_verb, text)
    text = _LONE_I.sub("User", text)
    text = _MY_START.sub("User's", text)
    # Once the sentence is about "User", a later "my" reads "their" ("sold their car").
    text = _MY.sub("their" if text.startswith("User") else "User's", text)
    text = _MYSELF.sub("themselves", text)
    text = _ME.sub("the user", text)
    return finish_sentence(text)


def finish_sentence(text: str) -> str:
    """Capitalized, single spaces, ending with exactly one period."""
    text = " ".join(text.split()).rstrip(" .!;,:\u2026")
    if not text:
        return ""
    return text[0].upper() + text[1:] + "."


def normalized(text: str) -> str:
    """Lower-case words only: for "the same text" comparisons."""
    return " ".join(re.findall(r"\w+", text.lower()))
