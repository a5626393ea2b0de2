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

import functools
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
    r"(?:,?\s+(?:now|nowadays|these days|currently|anymore|any more|today|instead|again))+$",
    re.IGNORECASE,
)
_TIME_HEAD = re.compile(
    r"^(?:(?:now|currently|nowadays|finally|just|recently|no longer)\s+)+", re.IGNORECASE
)
_POSSESSIVE = re.compile(r"^User's\s+(?P<attr>[\w\s-]+?)\s+(?P<cop>is|are)\s+(?P<value>.+)$")
# "We" has no claim of its own ("we live" is no third person), but it can move house.
_PREDICATE = re.compile(r"^(?:User|We)\s+(?P<pred>.+)$")
_USER_PREDICATE = re.compile(r"^User\s+(?P<pred>.+)$")


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
    match = _USER_PREDICATE.match(text)
    if not match:
        return None
    predicate = _TIME_HEAD.sub("", match.group("pred"))
    marked = marked or predicate != match.group("pred")
    words = predicate.split()
    if len(words) < 2 or base_form(words[0]) is None:
        return None
    key_words = [words[0].lower()]
    if base_form(words[0]) == "be" and words[1].lower().endswith("ing") and len(words) > 2:
        key_words.append(words[1].lower())  # "is learning", "is training for"
    nxt = words[len(key_words)].lower()
    if nxt in _LINKERS and len(words) > len(key_words) + 1:
        key_words.append("a" if nxt == "an" else nxt)
    value = " ".join(words[len(key_words) :])
    return Claim(" ".join(key_words), value, predicate, None, marked)


def _content_words(text: str) -> set[str]:
    return {w for w in normalized(text).split() if w not in _STOPWORDS}


def _overlap(a: str, b: str) -> float:
    wa, wb = _content_words(a), _content_words(b)
    return len(wa & wb) / len(wa | wb) if wa | wb else 0.0


def _conflicts(a: Claim, b: Claim, similarity: float, similar: float) -> bool:
    """Same key already holds; decide whether the values exclude each other."""
    if b.marked:  # "now", "anymore", "instead": the speaker says it changed
        return True
    if a.key in _SINGLE_VALUED or (a.attribute and _SINGLE_ATTRIBUTE.search(a.attribute)):
        return True
    verb = a.key.split()[0]
    if a.attribute is None and base_form(verb) in _MULTI_VALUED and not b.marked:
        return False
    return _overlap(a.value, b.value) >= 1 / 3 or similarity >= similar


def same_attribute_change(old: str, new: str, similarity: float, similar: float) -> str | None:
    """The rewritten old memory when `new` gives the same attribute a new value, else None."""
    a, b = parse_claim(old), parse_claim(new)
    if a is None or b is None or a.key != b.key:
        return None
    if normalized(a.value) == normalized(b.value) or _restates(a.value, b.value):
        return None
    if not _conflicts(a, b, similarity, similar):
        return None
    return _statement(new)


def _restates(old: str, new: str) -> bool:
    """Every content word of one value is in the other: the same value, told at more or
    less length ("vegetarian" / "vegetarian, so the food here is hard")."""
    a, b = _content_words(old), _content_words(new)
    return bool(a) and bool(b) and (a <= b or b <= a)


def _statement(new: str) -> str:
    """What a superseded memory becomes: the new statement as it was extracted (its earlier
    wording stays in the memory's history), never a splice of the two."""
    return " ".join(new.split())


@dataclass(frozen=True)
class _Family:
    patterns: tuple[re.Pattern[str], ...]


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
    ),
    _Family(
        _patterns(
            r"lives in",
            r"is living in",
            r"is based in",
            r"(?:has )?(?:moved|relocated)(?: back)? to",
            r"(?:has )?settled in",
        ),
    ),
    _Family(
        _patterns(
            r"works (?:at|for)",
            r"is employed (?:at|by)",
            r"(?:has )?started (?:working|a new job) (?:at|for)",
            r"(?:has )?(?:got|landed) a (?:new )?job (?:at|with)",
        ),
    ),
    _Family(_patterns(r"drives", r"(?:has|owns) a car,?", r"(?:has )?(?:bought|got) a new car,?")),
)


# "..., not Tallinn" / "instead of X": what follows names the value it is not.
_NOT_VALUE = re.compile(r",?\s+(?:not|instead of|rather than)\s+.*$", re.IGNORECASE)


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
            return predicate, _NOT_VALUE.sub("", found.group("value"))
    return None


def family_change(old: str, new: str) -> str | None:
    """The rewritten old memory for a job, location or employer change, else None."""
    for family in FAMILIES:
        a, b = _family_value(family, old), _family_value(family, new)
        if a is None or b is None or _restates(a[1], b[1]):
            continue
        return _statement(new)
    return None


# "sold X and bought Y", "gave up on X", "switched from X to Y", "left X", "no longer has X":
# the new statement ends what an old one says about X, whatever the attribute.
_ENDED = re.compile(
    r"^(?:User|We)\s+(?:(?:finally|just|recently|also|has|have|had)\s+)*"
    r"(?:sold|gave away|got rid of|gave up(?: on)?|quit|stopped|left|dropped|switched from|"
    r"moved (?:away )?from|replaced|traded(?: in)?|broke up with|retired from|"
    r"(?:does|do) not (?:have|own|drive|eat|play|learn|use) \w*\s*(?=.*\b(?:anymore|any more)\b)|"
    r"no longer (?:has|owns|drives|eats|plays|uses|learns|is|works (?:at|for|as)|lives in))\s+"
    r"(?:(?:their|the|a|an|User's|our|its)\s+)?(?P<old>.+?)"
    r"(?:\s+(?:and|for|with|to|in favou?r of|anymore|any more)\b.*|[,;].*)?[.!]?$",
    re.IGNORECASE,
)


def ended_value(content: str) -> str | None:
    """X when `content` says the user ended something about X ("sold their Golf and ..."):
    the content words of X, or None."""
    found = _ENDED.match(" ".join(content.split()))
    if not found:
        return None
    words = _content_words(found.group("old")) - {"user", "their", "our"}
    return " ".join(sorted(words)) or None


def ended_change(old: str, new: str) -> str | None:
    """`new` when it ends what `old` states about a thing `old` names, else None."""
    ended = ended_value(new)
    if ended is None or ended_value(old) is not None:
        return None
    words = set(ended.split())
    return _statement(new) if words <= _content_words(old) else None


_STILL = re.compile(r"\bstill\b", re.IGNORECASE)
_NOT_NAMES = frozenset({"User", "We", "I", "Still", "The", "My", "Yes", "Yep"})


def restatement_of(new: str, old: str) -> bool:
    """`new` says "still" about what `old` already states: every name in `new` ("Helix is
    still my editor": Helix) is in `old`, or, without names, most of its words are."""
    if not _STILL.search(new):
        return False
    names = {w for w in re.findall(r"\b[A-Z][\w+#-]*", new) if w not in _NOT_NAMES}
    old_words = set(re.findall(r"[\w+#-]+", old))
    if names:
        # The first word is capitalised whatever it is ("Home is still Oslo"): it may miss.
        first = new.split()[0].strip(",.!") if new.split() else ""
        return bool(names & old_words) and names - old_words <= {first}
    words = _content_words(new) - {"still", "user", "their"}
    return bool(words) and len(words & _content_words(old)) / len(words) >= 2 / 3


def changed_fact(old: str, new: str, similarity: float, similar: float) -> str | None:
    """What `old` becomes when `new` updates the same fact (the new statement), else None
    (conservative)."""
    return (
        family_change(old, new)
        or ended_change(old, new)
        or same_attribute_change(old, new, similarity, similar)
    )


# Every ranked read compares its hits with up to a hundred later memories
# (`core.supersession`), so one text's keys are asked for again and again; they depend on the
# text alone.
@functools.lru_cache(maxsize=4096)
def change_keys(content: str, *, as_old: bool = False) -> frozenset[str]:
    """What a sentence states, as keys: the claim's attribute, the families it belongs to and
    (for a statement that ends something) the words of what it ends.

    `changed_fact(old, new, ...)` can only return a rewrite when `change_keys(old,
    as_old=True)` and `change_keys(new)` share a key, so callers compare a sentence with the
    few memories sharing one instead of with all. An old statement's keys also hold each of
    its words, for the new statements that end one of them.
    """
    keys = {f"family:{i}" for i, f in enumerate(FAMILIES) if _family_value(f, content)}
    claim = parse_claim(content)
    if claim is not None:
        keys.add(f"claim:{claim.key}")
    ended = ended_value(content)
    if as_old:
        keys.update(f"word:{w}" for w in _content_words(content))
    elif ended is not None:
        keys.update(f"word:{w}" for w in ended.split())
    return frozenset(keys)
