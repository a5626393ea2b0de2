"""Checking the reconsolidation gate's evidence: the quoted span must occur in the input.

Quote and input are normalised the same way, then compared as plain substrings:
- Unicode NFKC, then case-folded;
- typographic quotes and apostrophes become ASCII ' and ", dashes become '-';
- every run of whitespace becomes one space;
- the quote loses surrounding quotation marks, spaces and trailing . , ; : ! ? (a model
  often closes a quoted clause with punctuation the speaker did not type there).
A quote must keep at least MIN_QUOTE_CHARS letters or digits: an empty or two-letter quote
proves nothing. It must lie inside one unit of the input (one string, one message or one
pre-extracted item); in a conversation only the user's and tools' messages count, since
the agent's own words are no evidence of what the user said.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from mnemo.domain.inputs import AddInput

MIN_QUOTE_CHARS = 4
_TRANSLATE = str.maketrans(
    {
        "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u2032": "'",
        "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2033": '"',
        "\u2013": "-", "\u2014": "-", "\u2212": "-",
    }
)  # fmt: skip
_SPACE = re.compile(r"\s+")
_EDGE = "\"' "
_TRAILING = ".,;:!?" + _EDGE


def normalise(text: str) -> str:
    folded = unicodedata.normalize("NFKC", text).casefold().translate(_TRANSLATE)
    return _SPACE.sub(" ", folded).strip()


def normalise_quote(quote: str) -> str:
    return normalise(quote).strip(_EDGE).rstrip(_TRAILING).strip(_EDGE)


def evidence_units(raw: AddInput) -> list[str]:
    """The parts of an add that can serve as evidence (see the module docstring)."""
    if raw.conversation is not None:
        return [m.content for m in raw.conversation.messages if m.effective_role == "user"]
    return raw.text_units()


def quote_found(quote: str, units: Iterable[str]) -> bool:
    """Whether `quote`, normalised, occurs inside one of `units`, normalised."""
    needle = normalise_quote(quote)
    if sum(ch.isalnum() for ch in needle) < MIN_QUOTE_CHARS:
        return False
    return any(needle in normalise(unit) for unit in units)
