"""The completeness verdict of an Engram pull and the queries its search rounds ask."""

from __future__ import annotations

from mnemo.cli.engram.reading import ScopeReport, _judge, _next_queries, _Part, chapman


def test_chapman_estimates_a_population_from_two_samples() -> None:
    assert chapman(100, 100, 100) == 100  # every one seen twice: nothing else
    assert round(chapman(100, 200, 70)) == 285  # a third of the list missed by search


def test_a_part_search_found_again_entirely_is_saturated() -> None:
    part = _Part(None, sampled={"a", "b"}, found={"a", "b", "c"})
    report = ScopeReport("g/t/u")
    _judge(report, [part], read=3)
    assert report.saturated and report.may_remain == 0


def test_a_part_search_missed_listed_memories_of_is_incomplete_with_an_estimate() -> None:
    part = _Part(None, sampled={f"l{i}" for i in range(100)},
                 found={f"l{i}" for i in range(70)} | {f"s{i}" for i in range(130)})  # fmt: skip
    report = ScopeReport("g/t/u")
    _judge(report, [part], read=230)
    assert not report.saturated
    assert report.estimated_total == 285 and report.may_remain == 55
    assert "never returned 30 memories the list showed" in report.note


def test_a_part_stopped_at_its_budget_is_incomplete() -> None:
    part = _Part(None, sampled={"a"}, found={"a"}, exhausted=True)
    report = ScopeReport("g/t/u")
    _judge(report, [part], read=1)
    assert not report.saturated and "query budget" in report.note


def test_search_asks_each_listed_memorys_rarest_term_first_then_rarest_terms() -> None:
    seen = {
        "a": {"id": "a", "content": "kayak near Oslo", "properties": {}},
        "b": {"id": "b", "content": "piano near Oslo", "properties": {}},
        "c": {"id": "c", "content": "kayak near Lima", "properties": {}},
    }
    part = _Part(None, sampled={"a", "b"})
    first = _next_queries(part, seen)
    # Rarest terms of a and b among what was seen (ties broken by the word).
    assert first == [("bm25", "kayak"), ("bm25", "piano")]
    second = _next_queries(part, seen)
    assert [q for q in second if q[0] == "bm25"] == [("bm25", t) for t in ("lima", "oslo", "near")]
    assert {q[0] for q in second} == {"bm25", "vector", "hybrid"}
