"""An exact BM25 top-k over the postings table that skips the postings of common terms.

MaxScore-style dynamic pruning (Turtle & Flood 1995), set at a time in SQL. A term's
contribution to any memory's score is below its bound idf * (k1 + 1), because
tf / (tf + K) < 1 for every K > 0; no statistic beyond the document frequencies is needed.

1. Document frequencies: one statement reads the query's lexemes and counts each one's
   postings in the filtered scope (the exhaustive query's figure), through the postings
   index. In a large scope the common terms' figures come from the corpus statistics'
   cache instead (store/corpus_stats.py), which lag by at most its ttl as N does: counting
   the postings of a word every memory holds costs as much as ranking them.
2. `seed_terms` (pure) leaves out the commonest terms ("rest") whose bounds sum well below
   what the other terms ("seeds") give a memory. With nothing to leave out, the exhaustive
   ranking (bm25.ranked) runs: one statement, cheaper than this one reading every term.
3. One statement reads only the seeds' postings: each seed memory's partial score (the
   seeds' frequencies counted among those postings, as the exhaustive query counts them),
   theta = the k-th best partial score (a lower bound of the k-th best full score), and the
   rest's total bound. If rest < theta, a memory holding no seed term cannot reach the top
   k and is never read (the "user" of "User likes ...": postings in every memory, tiny
   idf); of the seed memories only those with partial + rest >= theta can, and only their
   rest terms are looked up, by (memory_id, lexeme). The statement also says whether
   rest < theta held; when it did not (too few seed memories, too low a threshold), the
   exhaustive ranking runs instead, so results never depend on the heuristic.

Scores are the exhaustive query's (bm25.ranked): same idf, same per-posting formula, same
rank (rounded to RANK_PLACES) and tie order (rank desc, updated_at desc, id), with the rest
terms' frequencies as cached (they lag as N does). The strict margin MARGIN keeps a pruned
memory's rounded rank strictly below the k-th's.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from typing import Any, NamedTuple

from sqlalchemy import (
    ColumnElement,
    Float,
    Numeric,
    Select,
    String,
    any_,
    bindparam,
    case,
    cast,
    false,
    func,
    literal,
    null,
    over,
    select,
    type_coerce,
)
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.sql.elements import Grouping

from mnemo.store.bm25 import (
    K1,
    RANK_PLACES,
    idf_of,
    indexed_postings,
    lexemes_of,
    on_terms,
    posting_score,
    ranked,
)
from mnemo.store.corpus_stats import CorpusStats
from mnemo.store.rows import MEMORY_COLUMNS
from mnemo.store.schema import TERM_CHARS, memories, memory_terms

# Above float error in the scores (~1e-14) and above half a unit of the rounded rank.
MARGIN = 1e-6
# Looking up a seed memory's rest terms costs about six postings ranked in full (8 against
# 1.3 microseconds at 100k memories, bench.bm25_ab), and the commonest seed's memories may
# all be looked up (when the rest's bound is not small against theta): skipping pays only
# when the rest hold that many times its postings.
LOOKUP_COST = 6


def frequencies_statement(
    where: ColumnElement[bool], text_: str, known: Collection[str]
) -> Select[Any]:
    """(lexeme, df) of each distinct query term: its postings in the filtered scope; NULL
    for a term in `known` (its figure is cached), which is never counted (CASE evaluates
    the count only when it is needed)."""
    lexeme = lexemes_of(text_)
    terms = (
        select(func.left(lexeme.c.lexeme, TERM_CHARS).label("lexeme"))
        .select_from(lexeme)
        .distinct()
        .subquery("terms")
    )
    counted = (
        select(func.count())
        .select_from(memory_terms)
        .where(on_terms(where), memory_terms.c.lexeme == terms.c.lexeme)
        .scalar_subquery()
    )
    cached = terms.c.lexeme == any_(bindparam("bm25_known", sorted(known), ARRAY(String)))
    return select(terms.c.lexeme, case((cached, null()), else_=counted).label("df"))


def _idf(df: int, documents: int) -> float:
    """bm25.idf_of in Python, with the same float operations and libm's log: scores agree
    with the exhaustive query's far below the 9 places ranks are rounded to (the exactness
    test compares them)."""
    n, f = float(max(documents, df)), float(df)
    return math.log(1 + (n - f + 0.5) / (f + 0.5))


def _bound(df: int, documents: int) -> float:
    return _idf(df, documents) * (K1 + 1)


def seed_terms(frequencies: Mapping[str, int], documents: int, limit: int) -> list[str]:
    """The terms to read in full: the rarest, in order, until their postings may hold
    `limit` memories, the rest's total bound is below what one average memory holding
    each seed term once scores (bound / (k1 + 1)), and the rest hold LOOKUP_COST times as
    many postings as the commonest seed. A guess that only decides speed, never results.
    Every term with postings when no such prefix exists."""
    order = sorted(
        (t for t, df in frequencies.items() if df > 0), key=lambda t: (frequencies[t], t)
    )
    bounds = [_bound(frequencies[t], documents) for t in order]
    skipped = sum(frequencies[t] for t in order)
    postings = 0
    for i, term in enumerate(order):
        postings += frequencies[term]
        skipped -= frequencies[term]
        seed, rest = sum(bounds[: i + 1]), sum(bounds[i + 1 :])
        cheaper = skipped >= LOOKUP_COST * frequencies[term]
        if postings >= limit and rest < seed / (K1 + 1) and cheaper:
            return order[: i + 1]
    return order


def _rest_postings(
    rest: Mapping[str, int], corpus: CorpusStats
) -> tuple[ColumnElement[bool], ColumnElement[Any]]:
    """The condition selecting the rest terms' postings and each posting's score. A
    posting's idf is looked up in a bound array computed once per term: not joined (a join
    misled the planner's row estimates), and no logarithm per posting."""
    terms = sorted(rest)
    lexemes = bindparam("bm25_rest_lexemes", terms, type_=ARRAY(String))
    idfs = [_idf(rest[t], corpus.documents) for t in terms]
    idf = type_coerce(Grouping(bindparam("bm25_rest_idfs", idfs, ARRAY(Float))), ARRAY(Float))[
        func.array_position(lexemes, memory_terms.c.lexeme)
    ]
    tf, dl = cast(memory_terms.c.tf, Float), cast(memory_terms.c.dl, Float)
    return memory_terms.c.lexeme == any_(lexemes), posting_score(idf, tf, dl, corpus)


def pruned_statement(
    where: ColumnElement[bool],
    seeds: Sequence[str],
    rest: Mapping[str, int],
    limit: int,
    corpus: CorpusStats,
) -> Select[Any]:
    """Rows (MEMORY_COLUMNS + bm25 + exact) of the best `limit` memories among those the
    `seeds` reach, the `rest` terms (with their document frequencies) looked up; `exact`
    is true when the pruning held (see the module docstring)."""
    postings = (
        select(
            memory_terms.c.memory_id.label("id"),
            memory_terms.c.updated_at,
            cast(memory_terms.c.tf, Float).label("tf"),
            cast(memory_terms.c.dl, Float).label("dl"),
            cast(over(func.count(), partition_by=memory_terms.c.lexeme), Float).label("df"),
        )
        .where(
            on_terms(where),
            memory_terms.c.lexeme == any_(bindparam("bm25_seeds", list(seeds), ARRAY(String))),
        )
        .subquery("postings")
    )
    idf = idf_of(postings.c.df, corpus)
    seed = (
        select(
            postings.c.id,
            postings.c.updated_at,
            func.sum(posting_score(idf, postings.c.tf, postings.c.dl, corpus)).label("partial"),
        )
        .group_by(postings.c.id, postings.c.updated_at)
        .cte("seed")
    )
    theta = (
        select(seed.c.partial)
        .order_by(seed.c.partial.desc())
        .offset(limit - 1)
        .limit(1)
        .scalar_subquery()
    )
    # Above every rest score a memory can get (float error is far below MARGIN).
    rest_bound = literal(sum(_bound(df, corpus.documents) for df in rest.values()), Float)
    # A memory's scope columns are the same on all its postings: no filter needed.
    restricted, rest_score = _rest_postings(rest, corpus)
    looked_up = (
        select(func.coalesce(func.sum(rest_score), 0.0))
        .where(memory_terms.c.memory_id == seed.c.id, restricted)
        .scalar_subquery()
    )
    # A memory whose partial score plus everything the rest could add stays below theta
    # cannot be in the top k: its rest terms are never looked up.
    reachable = func.coalesce(seed.c.partial + rest_bound >= theta - MARGIN, false())
    exact = func.coalesce(rest_bound < theta - MARGIN, false())
    scored = (
        select(seed.c.id, seed.c.updated_at, (seed.c.partial + looked_up).label("bm25"))
        .where(reachable)
        .cte("scored")
        .prefix_with("MATERIALIZED")
    )
    rank = func.round(cast(scored.c.bm25, Numeric), RANK_PLACES)
    top = (
        select(scored, rank.label("rank"))
        .order_by(rank.desc(), scored.c.updated_at.desc(), scored.c.id)
        .limit(limit)
        .cte("top")
    )
    return (
        select(*MEMORY_COLUMNS, top.c.bm25, exact.label("exact"))
        .join(top, top.c.id == memories.c.id)
        .order_by(top.c.rank.desc(), top.c.updated_at.desc(), top.c.id)
    )


class Ranked(NamedTuple):
    hits: list[tuple[Any, float]]
    # "pruned" (some postings skipped), "exhaustive" (every term read) or "fallback" (the
    # pruning did not hold; every term was read after it)
    path: str
    # The document frequencies this search counted (not those `corpus` knew), for the
    # cache: CorpusStatsCache.learn
    counted: dict[str, int]


async def pruned_search(
    conn: Any, where: ColumnElement[bool], text_: str, limit: int, corpus: CorpusStats
) -> Ranked:
    """bm25_search's rows for the postings table, how they were found, and the frequencies
    counted. `corpus.frequencies` are the known common terms (module docstring, 1)."""
    known = corpus.frequencies
    found = (await conn.execute(frequencies_statement(where, text_, known.keys()))).all()
    counted = {row.lexeme: int(row.df) for row in found if row.df is not None}
    frequencies = {row.lexeme: known.get(row.lexeme, 0) for row in found} | counted
    if not any(frequencies.values()):
        return Ranked([], "exhaustive", counted)  # no query term has a posting here
    seeds = seed_terms(frequencies, corpus.documents, limit)
    rest = {t: df for t, df in frequencies.items() if df > 0 and t not in seeds}
    path = "exhaustive"
    if rest:
        rows = (await conn.execute(pruned_statement(where, seeds, rest, limit, corpus))).all()
        if rows and rows[0].exact:
            return Ranked([(row, float(row.bm25)) for row in rows], "pruned", counted)
        path = "fallback"
    rows = (await conn.execute(ranked(indexed_postings(where, text_), limit, corpus))).all()
    return Ranked([(row, float(row.bm25)) for row in rows], path, counted)
