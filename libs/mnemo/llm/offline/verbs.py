"""Tiny English verb helpers for the offline heuristics (no dictionary, no model).

They cover regular verbs and a short list of common irregular ones; anything else is
conjugated by the usual spelling rules, which is right most of the time and harmless otherwise.
"""

from __future__ import annotations

_THIRD_PERSON_IRREGULAR = {"have": "has", "be": "is", "am": "is", "do": "does", "go": "goes"}
_BASE_IRREGULAR = {"has": "have", "is": "be", "does": "do", "goes": "go", "are": "be"}
_ES_ENDINGS = ("s", "sh", "ch", "x", "z", "o")
_VOWELS = "aeiou"

# Words after "I" that must not get a third-person "s": modals and past forms.
_UNCHANGED = frozenset(
    "can could will would should shall may might must did had was were used got went made took "
    "bought saw met became began wrote ran came left lost found thought knew grew gave spent felt "
    "built taught said told sold won chose drove flew ate drank kept brought heard paid sent "
    "understood forgot".split()
)

# Adverbs that may sit between "I" and its verb: "I really like", "I usually go".
ADVERBS = frozenset(
    "also really usually always often never sometimes mostly just still currently actually "
    "definitely absolutely generally totally mainly rarely normally typically honestly now "
    "only even".split()
)


def third_person(verb: str) -> str:
    """`work` -> `works`, `watch` -> `watches`, `study` -> `studies`; past forms unchanged."""
    lower = verb.lower()
    if lower in _UNCHANGED or lower.endswith("ed") or lower.endswith("ing"):
        return verb
    if lower in _THIRD_PERSON_IRREGULAR:
        return _THIRD_PERSON_IRREGULAR[lower]
    if lower.endswith(_ES_ENDINGS):
        return verb + "es"
    if len(lower) > 1 and lower.endswith("y") and lower[-2] not in _VOWELS:
        return verb[:-1] + "ies"
    return verb + "s"


def base_form(verb: str) -> str | None:
    """`works` -> `work`, `studies` -> `study`; None when `verb` is not a present third person."""
    lower = verb.lower()
    if lower in _BASE_IRREGULAR:
        return _BASE_IRREGULAR[lower]
    if lower in _UNCHANGED:
        return None
    if not lower.endswith("s") or lower.endswith("ss") or len(lower) < 3:
        return None
    if lower.endswith("ies"):
        return lower[:-3] + "y"
    if lower.endswith(tuple(e + "es" for e in ("sh", "ch", "x", "z", "ss"))):
        return lower[:-2]
    return lower[:-1]
