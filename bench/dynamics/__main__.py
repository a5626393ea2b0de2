"""`python -m bench.dynamics [--seed N] [--size USERS] [--providers offline,oracle,real]
[--families templated,freeform]`

Runs the generated scenarios (`bench.dynamics.scenario`, one per family) for every provider against the
append-only baseline and with each mechanism switched off, in one run, on an embedded
Postgres with the local embedding model, and prints the dynamics table.
Providers: `offline` (the offline heuristics), `oracle` (a scripted server answering from the
scenario's ground truth: everything but the LLM's judgement), `real` (the LLM that
MNEMO_LLM_BASE_URL / MNEMO_LLM_API_KEY / MNEMO_LLM_MODEL name; included by default when set).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

from bench.common import Table
from bench.dynamics import recall_cost, report
from bench.dynamics.oracle import Oracle
from bench.dynamics.runner import open_run, run_variant
from bench.dynamics.scenario import Scenario, generate
from bench.dynamics.variants import VARIANTS
from mnemo.contracts.embedder import Embedder
from mnemo.contracts.llm import LLM
from mnemo.embeddings.local import LocalEmbedder
from tests.support.postgres import EmbeddedPostgres
from tests.support.scripted_llm import ScriptedLLMServer


@contextlib.asynccontextmanager
async def provider(name: str, scenario: Scenario, embedder: Embedder) -> AsyncIterator[LLM]:
    if name == "offline":
        from mnemo.llm.offline import OfflineLLM

        yield OfflineLLM(embedder)
    elif name == "oracle":
        from mnemo.llm.openai_client import OpenAICompatibleLLM

        with ScriptedLLMServer() as server:
            Oracle(scenario).install(server)
            yield OpenAICompatibleLLM(base_url=server.base_url, api_key=None, model="oracle",
                                      timeout=30, max_attempts=2)  # fmt: skip
    elif name == "real":
        from mnemo.llm.factory import llm_from_settings
        from mnemo.settings import Settings

        yield llm_from_settings(Settings(), embedder)  # the engine closes it
    else:
        raise SystemExit(f"unknown provider {name!r}")


# Scenario families: the templated one ("I moved to X.") and the free-form one
# (bench.dynamics.freeform: "I sold my X and bought a Y").
FAMILIES = ("templated", "freeform")

LABELS = {
    "offline": "offline heuristics",
    "oracle": "scenario oracle (scripted)",
    "real": "real LLM",
}


async def main_async(
    seed: int, size: int, providers: list[str], work: Path, families: tuple[str, ...] = FAMILIES
) -> str:
    embedder = LocalEmbedder()
    await embedder.warm_up()
    postgres = EmbeddedPostgres(work / "pg")
    rows, notes = [], []
    started = time.monotonic()
    scenarios = [generate(seed, size, f) for f in families]
    try:
        for scenario in scenarios:
            for name in providers:
                rows += await _provider_rows(postgres, work, name, scenario, embedder, notes)
    finally:
        postgres.stop()
    for scenario in reversed(scenarios):
        notes.insert(0, f"{scenario.family} scenario: seed {seed}, {size} users, "
                     f"{len(scenario.events)} adds in {len(scenario.rounds)} rounds per run")  # fmt: skip
    notes.insert(len(scenarios), f"{time.monotonic() - started:.0f} s in all")
    return report.render(rows, notes)


async def _provider_rows(
    postgres: EmbeddedPostgres,
    work: Path,
    name: str,
    scenario: Scenario,
    embedder: Embedder,
    notes: list[str],
) -> list[tuple[str, ...]]:
    rows = []
    async with provider(name, scenario, embedder) as llm:
        run = await open_run(postgres.new_database("dyn"), work, llm, embedder)
        try:
            for variant in VARIANTS:
                began = time.monotonic()
                figures = await run_variant(run, scenario, variant)
                label = f"{LABELS[name]}, {scenario.family}"
                rows.append(report.row(label, variant.name, figures))
                print(f"  {name}/{scenario.family}/{variant.name}: "
                      f"{time.monotonic() - began:.0f} s, calls {figures.llm_calls}", flush=True)  # fmt: skip
            if not any(n.startswith("recall tracking") for n in notes):
                cost = await recall_cost.measure(run, memories=2000, searches=300)
                notes.append(_cost_note(cost))
        finally:
            await run.engine.close()
    return rows


def _cost_note(c: dict[str, float]) -> str:
    us = 1e6
    return (
        f"recall tracking per search: record() p50 {c['record_p50'] * us:.1f} us, p99 "
        f"{c['record_p99'] * us:.1f} us on the search path; background write "
        f"{c['write_per_search'] * 1000:.3f} ms per search (batches of 500); vector search "
        f"at 2000 memories p50 {c['search_on_p50'] * 1000:.1f} ms tracked vs "
        f"{c['search_off_p50'] * 1000:.1f} ms untracked (300 searches alternating)"
    )


def run_section(table: Table, out: Path, quick: bool) -> None:
    """`bench.run` section 6: the dynamics table goes to `out`; the main table notes it."""
    size = 3 if quick else 8
    providers = "offline,oracle" + (",real" if os.environ.get("MNEMO_LLM_BASE_URL") else "")
    with tempfile.TemporaryDirectory(prefix="mnemo-dynamics-") as work:
        text = asyncio.run(main_async(7, size, providers.split(","), Path(work)))
    out.write_text(text + "\n")
    table.add("7 dynamics", "memory dynamics", f"{size} users, {providers}", "own table below")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="memory-dynamics benchmark")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--size", type=int, default=8, help="users in the scenario")
    default = "offline,oracle" + (",real" if os.environ.get("MNEMO_LLM_BASE_URL") else "")
    parser.add_argument("--providers", default=default)
    parser.add_argument("--families", default=",".join(FAMILIES), help="scenario families")
    args = parser.parse_args(argv)
    families = tuple(args.families.split(","))
    logging.basicConfig(level=logging.WARNING)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    with tempfile.TemporaryDirectory(prefix="mnemo-dynamics-") as work:
        table = asyncio.run(
            main_async(args.seed, args.size, args.providers.split(","), Path(work), families)
        )
    print(table)


if __name__ == "__main__":
    main()
