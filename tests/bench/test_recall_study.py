"""bench.recall_study re-ranks pools as the product does: its `gap` form is the shipped
context signal, and the forms it compares really differ."""

from __future__ import annotations

from datetime import UTC, date, datetime

from bench.recall_study import FORMS, Pool, ranked
from bench.retrieval_data import Question
from mnemo.core.query_understanding import QueryIntent, Window
from mnemo.core.recall_signals import RecallWeights, rerank
from mnemo.domain.memory import Memory

JULY = datetime(2023, 7, 9, tzinfo=UTC)
MAY = datetime(2023, 5, 9, tzinfo=UTC)


def memory(n: int, score: float, when: datetime) -> Memory:
    return Memory(
        id=f"m{n}",
        project_id="p",
        content="a memory",
        topic="t",
        group="g",
        created_at=when,
        updated_at=when,
        score=score,
        event_time=when,
        event_time_end=when,
        properties={"doc_id": f"d{n}"},
    )


def study_pool() -> Pool:
    scores = [0.95, 0.93, 0.90, 0.80, 0.70, 0.60, 0.50, 0.40, 0.30, 0.20]
    found = [memory(n, s, JULY if n in (4, 7) else MAY) for n, s in enumerate(scores)]
    # m0..m2 one run's adjacent turns; m8 the reply after m3; m5 alone
    near = {
        "m0": ["m1"],
        "m1": ["m0", "m2"],
        "m2": ["m1"],
        "m3": ["m8"],
        "m8": ["m3"],
        "m6": ["m9"],
        "m9": ["m6"],
    }
    intent = QueryIntent(windows=(Window(date(2023, 7, 1), date(2023, 7, 31)),))
    question = Question(user="u", text="q", evidence=frozenset({"d8"}), category="c")
    return Pool(question, found, intent, near)


def test_the_gap_form_ranks_as_the_product_does() -> None:
    pool = study_pool()
    for weight in (0.3, 0.5, 1.0):
        product = rerank(
            pool.found,
            "hybrid",
            pool.intent,
            pool.near,
            RecallWeights(time=1.0, context=weight),
            len(pool.found),
        )
        expected = [(m.properties or {})["doc_id"] for m in product]
        assert ranked(pool, FORMS["gap"], weight, 1.0) == expected


def test_without_a_form_only_time_moves_and_the_forms_differ() -> None:
    pool = study_pool()
    plain = ranked(pool, None, 0.0, 1.0)
    assert plain[:3] == ["d0", "d1", "d4"]  # the July memory lifted past d2
    # (at weight 1, gap and inherit are one form: max(z, n))
    orders = {name: ranked(pool, form, 0.5, 1.0) for name, form in FORMS.items()}
    assert len({tuple(order) for order in orders.values()}) == len(FORMS)
