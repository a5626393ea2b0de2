"""Conservative "same attribute, new value" detection for "User ..." sentences.

A claim is a sentence "User <verb> [linker] <value>" or "User's <attribute> is <value>".
Two claims conflict only when they state the same attribute (same verb and linker, e.g.
"prefers", "works as", "lives in", "'s favorite color is") with different values, and the
attribute is single-valued, the values share words, or the sentences are very similar.
For verbs that usually hold many values at once (has, likes, speaks, uses ...) the new
sentence must also say that it is a change ("now", "anymore", "instead", "these days").
On top of that, three explicit families catch changes phrased with different verbs:
job ("works as X" / "promoted to Y" / "became Y"), location ("lives in X" / "moved to Y") and
employer ("works at X" / "works for Y"). Everything else is never treated as a conflict.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mnemo.llm.offline.text import normalized
from mnemo.llm.offline.verbs import base_form

_LINKERS = frozenset("as in at for from to a an on with of not by".split())
_SINGLE_VALUED = frozenset(
    [
        "lives in",
        "works as",
        "works at",
        "works for",
        "is from",
        "is called",
        "is named",
        "is based",
    ]
)
_SINGLE_ATTRIBUTE = re.compile(
    r"\b(?:name|favou?rite|job|role|title|age|birthday|email|phone|address|employer)\b",
    re.IGNORECASE,
)
_MULTI_VALUED = frozenset(
    "have own like love enjoy hate dislike speak know use play visit read watch do".split()
)
_STOPWORDS = frozenset("a an the of in on at to for with and or but is are very really".split())
_TIME_TAIL = re.compile(
    r"(?:,?\s+(?:now|nowadays|these days|currently|anymore|today|instead))+$", re.IGNORECASE
)
_TIME_HEAD = re.compile(r"^(?:now|currently|nowadays)\s+", re.IGNORECASE)
_POSSESSIVE = re.compile(r"^User's\s+(?P<attr>[\w\s-]+?)\s+(?P<cop>is|are)\s+(?P<value>.+)$")
_PREDICATE = re.compile(r"^User\s+(?P<pred>.+)$")


@dataclass(frozen=True)
class Claim:
    key: str  # "prefers", "works as", "'s favorite color is"
    value: str  # "dark mode"
    predicate: str  # "prefers dark mode" (for possessives: "is blue")
    attribute: str | None = None  # "favorite color" for possessives
    marked: bool = False  # says it is a change: "now", "anymore", "instead", ...


def parse_claim(content: str) -> Claim | None:
    """The claim of a "User ..." sentence, or None for any other shape."""
    raw = " ".join(content.split()).rstrip(" .!")
    text = _TIME_TAIL.sub("", raw)
    marked = text != raw
    possessive = _POSSESSIVE.match(text)
    if possessive:
        attr, cop, value = possessive.group("attr", "cop", "value")
        return Claim(f"'s {attr.lower()} {cop}", value, f"{cop} {value}", attr, marked)
    match = _PREDICATE.match(text)
    if not match:
        return None
    predicate = _TIME_HEAD.sub("", match.group("pred"))
    marked = marked or predicate != match.group("pred")
    words = predicate.split()
    if len(words) < 2 or base_form(words[0]) is None:
        return None
    key_words = [words[0].lower()]
    if words[1].lower() in _LINKERS:
        key_words.append("a" if words[1].lower() == "an" else words[1].lower())
    value = " ".join(words[len(key_words) :])
    return Claim(" ".join(key_words), value, predicate, None, marked)


def _content_words(text: str) -> set[str]:
    return {w for w in normalized(text).split() if w not in _STOPWORDS}


def _overlap(a: str, b: str) -> float:
    wa, wb = _content_words(a), _content_words(b)
    return len(wa & wb) / len(wa | wb) if wa | wb else 0.0


def _conflicts(a: Claim, b: Claim, similarity: float, similar: float) -> bool:
    """Same key already holds; decide whether the values exclude each other."""
    if a.key in _SINGLE_VALUED or (a.attribute and _SINGLE_ATTRIBUTE.search(a.attribute)):
        return True
    verb = a.key.split()[0]
    if a.attribute is None and base_form(verb) in _MULTI_VALUED and not b.marked:
        return False
    return _overlap(a.value, b.value) >= 1 / 3 or similarity >= similar


def _base_predicate(predicate: str) -> str:
    verb, _, rest = predicate.partition(" ")
    return f"{base_form(verb) or verb} {rest}".strip()


def same_attribute_change(old: str, new: str, similarity: float, similar: float) -> str | None:
    """The rewritten old memory when `new` gives the same attribute a new value, else None."""
    a, b = parse_claim(old), parse_claim(new)
    if a is None or b is None or a.key != b.key:
        return None
    if normalized(a.value) == normalized(b.value):
        return None
    if not _conflicts(a, b, similarity, similar):
        return None
    if a.attribute is not None:
        return f"User's {a.attribute} used to be {a.value}, now {b.predicate}."
    return f"User used to {_base_predicate(a.predicate)}, now {b.predicate}."


@dataclass(frozen=True)
class _Family:
    patterns: tuple[re.Pattern[str], ...]
    old_phrase: str  # how an old value reads after "User used to"
    new_phrase: str | None  # how a new value reads after "now"; None keeps the new predicate


def _patterns(*sources: str) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(rf"^(?:{s})\s+(?P<value>.+)$", re.IGNORECASE) for s in sources)


# Explicit, documented rules for facts that change with a different verb.
FAMILIES = (
    _Family(
        _patterns(
            r"works as",
            r"is employed as",
            r"(?:has been|was|got|has got|just got) promoted to",
            r"became",
            r"has become",
        ),
        "work as {value}",
        None,
    ),
    _Family(
        _patterns(r"lives in", r"is living in", r"is based in", r"(?:has )?(?:moved|relocated) to"),
        "live in {value}",
        "lives in {value}",
    ),
    _Family(_patterns(r"works (?:at|for)", r"is employed (?:at|by)"), "work at {value}", None),
)


def _family_value(family: _Family, content: str) -> tuple[str, str] | None:
    """(predicate, value) when `content` is "User <one of the family's phrases> <value>"."""
    text = _TIME_TAIL.sub("", " ".join(content.split()).rstrip(" .!"))
    match = _PREDICATE.match(text)
    if not match:
        return None
    predicate = _TIME_HEAD.sub("", match.group("pred"))
    for pattern in family.patterns:
        found = pattern.match(predicate)
        if found:
            return predicate, found.group("value")
    return None


def family_change(old: str, new: str) -> str | None:
    """The rewritten old memory for a job, location or employer change, else None."""
    for family in FAMILIES:
        a, b = _family_value(family, old), _family_value(family, new)
        if a is None or b is None or normalized(a[1]) == normalized(b[1]):
            continue
        then = family.old_phrase.format(value=a[1])
        now = family.new_phrase.format(value=b[1]) if family.new_phrase else b[0]
        return f"User used to {then}, now {now}."
    return None


def changed_fact(old: str, new: str, similarity: float, similar: float) -> str | None:
    """The rewritten `old` when `new` updates the same fact, else None (conservative)."""
    return family_change(old, new) or same_attribute_change(old, new, similarity, similar)


def change_keys(content: str) -> frozenset[str]:
    """What a sentence states, as keys: the claim's attribute and the families it belongs to.

    `changed_fact(old, new, ...)` can only return a rewrite when `old` and `new` share a key,
    so callers compare a sentence with the few memories sharing one instead of with all.
    """
    keys = {f"family:{i}" for i, f in enumerate(FAMILIES) if _family_value(f, content)}
    claim = parse_claim(content)
    if claim is not None:
        keys.add(f"claim:{claim.key}")
    return frozenset(keys)
