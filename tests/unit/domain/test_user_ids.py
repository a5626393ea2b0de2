"""The user id rule: compare after NFKC and case folding; refuse characters that Unicode
folds onto others (compatibility characters and canonical singletons)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mnemo.domain.scope import InvalidUserId, check_user_id, normalize_user_id


@pytest.mark.parametrize(
    ("variants", "canonical"),
    [
        (["kate", "KATE", " Kate "], "kate"),
        (["stra\u00dfe", "STRASSE", "Strasse"], "strasse"),
        (["jos\u00e9", "jose\u0301", "JOS\u00c9", "JOSE\u0301"], "jos\u00e9"),
        (
            ["\u03c3\u03bf\u03c6\u03b9\u03b1\u03c2", "\u03a3\u039f\u03a6\u0399\u0391\u03a3"],
            "σοφιασ",
        ),
        (["\u13a0\u13a1", "\uab70\uab71"], "\u13a0\u13a1"),  # Cherokee folds to upper case
    ],
)
def test_variants_are_one_id(variants: list[str], canonical: str) -> None:
    assert {normalize_user_id(v) for v in variants} == {canonical}


@pytest.mark.parametrize(
    "impostor",
    [
        "\u212aate",  # KELVIN SIGN (a canonical singleton: NFC turns it into K)
        "\u2126mega",  # OHM SIGN
        "\uff4bate",  # fullwidth k
        "\ufb01ona",  # fi ligature
        "x\u2075",  # superscript five
        "\uf900",  # a CJK compatibility ideograph
    ],
)
def test_characters_folding_onto_others_are_refused(impostor: str) -> None:
    with pytest.raises(InvalidUserId):
        check_user_id(impostor)
    with pytest.raises(InvalidUserId):
        normalize_user_id(impostor)


def test_blank_is_none() -> None:
    assert normalize_user_id("   ") is None and normalize_user_id(None) is None


@settings(max_examples=300, derandomize=True)
@given(st.text(min_size=1, max_size=12))
def test_normal_form_is_stable_and_accepted(text: str) -> None:
    try:
        once = normalize_user_id(text)
    except InvalidUserId:
        return
    if once is None:
        return
    assert check_user_id(once) == once
    assert normalize_user_id(once) == once
