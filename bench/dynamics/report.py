"""The dynamics table: one row per provider and variant."""

from __future__ import annotations

from bench.dynamics.figures import Figures

HEAD = ("provider", "variant", "duplicate rate", "stale-fact rate (miss)", "thrash",
        "transfer MRR (hit@1)", "LLM calls/add")  # fmt: skip


def row(provider: str, variant: str, f: Figures) -> tuple[str, ...]:
    transfer = f.transfer()
    return (
        provider,
        variant,
        f"{f.duplicate_rate():.2f} ({f.duplicated}/{f.keys})",
        f"{f.stale_rate():.2f} ({f.missed / f.questions if f.questions else 0:.2f})",
        f"{f.thrash():.2f} ({f.restatement_writes}/{f.restatements})",
        f"{transfer[0]:.2f} ({transfer[1]:.2f})" if transfer else "n/a (no rules)",
        f"{f.calls_per_add():.3f}",
    )


def render(rows: list[tuple[str, ...]], notes: list[str]) -> str:
    widths = [max(len(r[i]) for r in [HEAD, *rows]) for i in range(len(HEAD))]
    line = "+".join("-" * (w + 2) for w in widths)
    out = [line, " | ".join(h.ljust(w) for h, w in zip(HEAD, widths, strict=True)), line]
    previous = None
    for r in rows:
        cells = (r[0] if r[0] != previous else "", *r[1:])
        out.append(" | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)))
        previous = r[0]
    out.append(line)
    return "\n".join([*out, *notes])
