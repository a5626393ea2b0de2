"""Offline twin of `extract_reconcile`: the extract heuristics, then the reconcile
heuristics over the memories shown, composed into the combined answer.

The engine does not send this prompt to the offline provider (its two calls cost nothing);
this answers it anyway, the same as the two steps would, for a provider behind a wrapper
that hides what it is.
"""

from __future__ import annotations

from mnemo.contracts.embedder import Embedder
from mnemo.llm.offline.extract import ExtractTuning, extract
from mnemo.llm.offline.offload import Offload
from mnemo.llm.offline.reconcile import ReconcileTuning, reconcile
from mnemo.prompts import extract_reconcile as combined_prompt
from mnemo.prompts import transform_with_context as twc_prompt


async def extract_reconcile(
    ctx: combined_prompt.Context,
    embedder: Embedder,
    tunings: tuple[ExtractTuning, ReconcileTuning],
    offload: Offload,
) -> combined_prompt.Response:
    extracted = await extract(ctx.extract, embedder, tunings[0], offload)
    at = ctx.extract.reference_time
    new = [
        twc_prompt.NewMemory(index=i, topic=m.topic, content=m.content, event_time=at)
        for i, m in enumerate(extracted.memories)
    ]
    twc = twc_prompt.Context(
        instructions=ctx.reconcile_instructions, existing=ctx.existing, new=new
    )
    decided = await reconcile(twc, embedder, tunings[1], offload)
    verdicts = {d.index: d for d in decided.new}
    memories = []
    for i, memory in enumerate(extracted.memories):
        verdict = verdicts.get(i)
        if verdict is None or verdict.action == "keep":
            memories.append(memory)
        elif verdict.action == "rewrite" and verdict.content:
            memories.append(memory.model_copy(update={"content": verdict.content}))
    return combined_prompt.Response(memories=memories, existing=decided.existing)
