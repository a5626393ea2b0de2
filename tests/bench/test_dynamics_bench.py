"""The memory-dynamics bench's scenario, oracle and figures (no database, no model)."""

from __future__ import annotations

import json
from typing import Any

from bench.dynamics import figures
from bench.dynamics.oracle import Oracle
from bench.dynamics.scenario import ATTRIBUTES, current_values, generate


def request(body: dict[str, Any]) -> dict[str, Any]:
    return {
        "messages": [
            {"role": "system", "content": "x"},
            {"role": "user", "content": json.dumps(body)},
        ]
    }


def test_scenarios_are_seeded_and_sized() -> None:
    a, b = generate(7, 3), generate(7, 3)
    assert [e.text for e in a.events] == [e.text for e in b.events]
    assert [e.text for e in generate(8, 3).events] != [e.text for e in a.events]
    assert len(a.users) == 3 and len(a.events) == 3 * 16
    for user in a.users:
        mine = [e for e in a.events if e.user == user.name]
        assert [e.kind for e in mine[:3]] == ["fact"] * 3
        assert sum(e.kind == "episode" and e.desk == user.desk for e in mine) == 4
        assert sum(e.kind == "episode" and e.desk == user.other_desk for e in mine) == 2
        last = {e.attribute: e.value for e in mine if e.attribute}
        assert last == current_values(user)
        for event in mine:
            if event.kind == "restate":  # restates the value current at that point
                earlier = [e for e in mine[: mine.index(event)] if e.attribute == event.attribute]
                assert event.value == earlier[-1].value
        [correction] = [e for e in mine if e.kind == "correct"]
        assert correction.recall_query == ATTRIBUTES["city"]["question"]


def test_the_oracle_answers_from_ground_truth() -> None:
    scenario = generate(7, 2)
    oracle = Oracle(scenario)
    fact = next(e for e in scenario.events if e.kind == "fact")
    extracted = oracle.extract(request({"input": [fact.text]}))
    assert extracted == {"memories": [{"topic": "Facts", "content": fact.memory}]}
    old, new, same = "User lives in Lisbon.", "User lives in Porto.", "User prefers chai."
    existing = [
        {"id": "a", "topic": "Facts", "content": old},
        {"id": "b", "topic": "Facts", "content": same},
    ]
    answer = oracle.reconcile(request({"existing": existing, "new": [
        {"index": 0, "topic": "Facts", "content": new},
        {"index": 1, "topic": "Facts", "content": same},
        {"index": 2, "topic": "Facts", "content": "User works as a pilot."}]}))  # fmt: skip
    assert answer["existing"] == [{"id": "a", "action": "rewrite", "content": new}]
    assert [n["action"] for n in answer["new"]] == ["delete", "delete", "keep"]
    gate = oracle.gate(request({"input": ["Actually, not Lisbon. I live in Porto now."],
                                "new": [{"index": 0, "topic": "Facts", "content": new}],
                                "recalled": [{"id": "a", "topic": "Facts", "content": old},
                                             {"id": "b", "topic": "Facts", "content": same}]}))  # fmt: skip
    assert gate["verdicts"][0]["decision"] == "contradict"
    assert gate["verdicts"][0]["evidence"] == "Actually, not Lisbon. I live in Porto now."
    assert gate["verdicts"][1] == {"id": "b", "decision": "unrelated"}
    theme = scenario.users[0].theme
    episodes = [
        {"id": f"e{i}", "content": t, "date": "d"} for i, t in enumerate(theme.episodes[:3])
    ]
    episodes.append({"id": "x", "content": "Something else happened.", "date": "d"})
    rule = oracle.consolidate(request({"new_episodes": episodes}))
    assert rule == {"rule": theme.rule, "used": ["e0", "e1", "e2"]}


def test_figures() -> None:
    f = figures.Figures()
    figures.count_key(
        f, ["User lives in Lisbon.", "User lives in Porto.", "User is a pilot"], "city"
    )
    figures.count_key(f, ["User used to live in Lisbon, now lives in Porto."], "city")
    assert (f.keys, f.duplicated) == (2, 1)
    figures.judge_top_hit(f, "User lives in Lisbon.", "city", "Porto")
    figures.judge_top_hit(f, "User used to live in Lisbon, now lives in Porto.", "city", "Porto")
    figures.judge_top_hit(f, "User prefers chai.", "city", "Porto")
    figures.judge_top_hit(f, None, "city", "Porto")
    assert (f.questions, f.stale, f.missed) == (4, 1, 2)
    figures.rank_rule(f, ["Episodes", "Rules"])
    figures.rank_rule(f, ["Rules"])
    figures.rank_rule(f, ["Facts"])
    assert f.transfer() == (0.5, 1 / 3)


def test_the_freeform_family_tells_changes_in_loose_phrasing() -> None:
    scenario = generate(7, 3, "freeform")
    assert scenario.family == "freeform" and len(scenario.events) == 3 * 19
    for user in scenario.users:
        mine = [e for e in scenario.events if e.user == user.name]
        assert {e.attribute for e in mine if e.kind == "change"} == {
            "car", "learning", "home", "editor"
        }  # fmt: skip
        assert {e.attribute: e.value for e in mine if e.attribute} == current_values(user)
        changes = [e.text for e in mine if e.kind == "change"]
        assert any(t.startswith("I sold my ") and " and bought a " in t for t in changes)
        assert any(t.startswith("We finally moved to ") for t in changes)
    f = figures.Figures()
    figures.judge_top_hit(f, "User drives a Golf.", "car", "Civic", scenario.attributes)
    assert f.stale == 1
