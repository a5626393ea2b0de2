"""The Python examples of docs/guides/agents-and-mcp.md, run as they are written against a
live gateway; the agents' model is the scripted OpenAI-compatible server, which plays a
remember, a recall and an answer quoting what was recalled."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.integrations.conftest import EXTRA_MISSING, Tenant
from tests.support.scripted_llm import ScriptedLLMServer, last_tool_output, text_turn, tool_call

pytest.importorskip("langgraph.prebuilt", reason=EXTRA_MISSING)
pytest.importorskip("agents", reason=EXTRA_MISSING)
pytest.importorskip("pydantic_ai", reason=EXTRA_MISSING)

PAGE = Path(__file__).resolve().parents[2] / "docs/guides/agents-and-mcp.md"
BLOCKS = re.findall(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)


def test_the_page_has_its_four_examples() -> None:
    assert PAGE.read_text(encoding="utf-8").startswith(
        "<!-- examples: tested by tests/integrations/test_docs_examples.py -->"
    )
    assert len(BLOCKS) == 4


@pytest.mark.parametrize(
    "block", BLOCKS, ids=["langgraph", "openai-agents", "pydantic-ai", "store"]
)
def test_an_example_runs_as_written(
    block: str,
    tenant: Tenant,
    agent_llm: ScriptedLLMServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for name, value in {
        "MNEMO_URL": tenant.url,
        "MNEMO_API_KEY": tenant.key,
        "OPENAI_BASE_URL": agent_llm.base_url,
        "OPENAI_API_KEY": "test",
        "OPENAI_AGENTS_DISABLE_TRACING": "true",
    }.items():
        monkeypatch.setenv(name, value)
    agent = "Agent(" in block or "create_react_agent" in block
    if agent:
        agent_llm.agent_turns(
            [
                tool_call("remember", fact="I moved to Lisbon"),
                tool_call("recall", query="where does the user live"),
                lambda request: text_turn(f"From memory: {last_tool_output(request)}"),
            ]
        )
    namespace: dict[str, Any] = {"__name__": "__main__"}
    exec(compile(block, str(PAGE), "exec"), namespace)  # the page's own example

    printed = capsys.readouterr().out
    if agent:
        assert printed.startswith("From memory: - ") and "Lisbon" in printed
    else:
        lines = printed.splitlines()
        assert lines[0] == "{'text': 'Ada lives in Lisbon'}"
        assert lines[1].startswith("home ")
