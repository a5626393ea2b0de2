"""The gate's evidence check: the quote must occur in the input (normalised)."""

from __future__ import annotations

import pytest

from mnemo.domain.inputs import AddInput
from mnemo.steps.evidence import evidence_units, normalise, quote_found

INPUT = AddInput.model_validate(
    {"conversation": {"messages": [
        {"role": "assistant", "content": "Start with a grade 2 filter and soft light."},
        {"role": "user", "content": "Actually  not grade 2.\nUse grade 4 with less diffusion, not soft light."},
        {"role": "tool", "content": "paper: Ilford MG RC \u201cpearl\u201d"},
    ]}}
)  # fmt: skip
UNITS = evidence_units(INPUT)


@pytest.mark.parametrize(
    "quote",
    [
        "Use grade 4 with less diffusion, not soft light",
        "use GRADE 4 with less diffusion",
        '"Use grade 4 with less diffusion, not soft light."',
        "not grade 2. Use grade 4",  # the newline is whitespace
        'Ilford MG RC "pearl"',  # typographic quotes in the input
    ],
)
def test_quotes_found(quote: str) -> None:
    assert quote_found(quote, UNITS)


@pytest.mark.parametrize(
    "quote",
    [
        "use grade 5",  # not said
        "Start with a grade 2 filter",  # the assistant's words are no evidence
        "soft light. paper: Ilford",  # spans two messages
        "",
        "2.",  # too short to prove anything
        "not",
    ],
)
def test_quotes_refused(quote: str) -> None:
    assert not quote_found(quote, UNITS)


def test_normalise() -> None:
    assert normalise("  Caf\u00e9\u2019s \u2014 BIG\n\tdeal ") == "caf\u00e9's - big deal"
    strings = AddInput.model_validate({"string": {"content": ["a b", "c d"]}})
    assert evidence_units(strings) == ["a b", "c d"]
