"""Okapi BM25 over Postgres full text, computed in one query.

Terms are the query's English lexemes. Candidates come from the GIN index (documents that
contain any term); document frequencies are counted among them, which equals the frequency in
the whole filtered scope because a document containing a term always matches. A document's
length is its count of English lexeme occurrences (`tsv_length`, stop words excluded; not its
distinct lexemes, which made long documents look short); N and the average length of the
filtered scope come from `corpus_stats` (cached for large scopes).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Float, cast, func, literal, literal_column, select, true
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.store.corpus_stats import CorpusStats
from mnemo.store.rows import MEMORY_COLUMNS
from mnemo.store.schema import memories

K1 = 1.2
B = 0.75


def _or_query(text_: str) -> ColumnElement[Any]:
    """Any of the text's English lexemes. Each is quoted (URLs and odd tokens stay literal)
    and parsed with the `simple` config so it is not stemmed twice; a text without lexemes
    (e.g. only punctuation or stop words) gives an empty query that matches nothing."""
    lexeme = (
        func.unnest(func.tsvector_to_array(func.to_tsvector("english", text_)))
        .table_valued("lexeme")
        .render_derived()
    )
    joined = (
        select(func.string_agg(func.quote_literal(lexeme.c.lexeme), " | "))
        .select_from(lexeme)
        .scalar_subquery()
    )
    return func.to_tsquery("simple", func.coalesce(joined, ""))


async def bm25_search(
    conn: AsyncConnection,
    where: ColumnElement[bool],
    text_: str,
    limit: int,
    corpus: CorpusStats,
) -> list[tuple[Any, float]]:
    """Rows (MEMORY_COLUMNS + bm25) best first, with the raw BM25 score (>= 0).

    `corpus` gives N and the average length of the filtered scope (see corpus_stats)."""
    terms = func.tsvector_to_array(func.to_tsvector("english", text_))
    # Only the query's lexemes of each matching document: mark them with weight A and keep
    # weight A. Unnesting whole documents instead made 100k-memory scopes 5x slower.
    query_lexemes = func.ts_filter(
        func.setweight(memories.c.tsv, literal_column("'A'"), terms), literal_column("'{a}'")
    )
    matched = (
        select(
            memories.c.id,
            query_lexemes.label("hits"),
            memories.c.tsv_length.label("dl"),
            memories.c.updated_at,
        )
        .where(where, memories.c.tsv.op("@@")(_or_query(text_)))
        .cte("matched")
    )
    lexemes = func.unnest(matched.c.hits).table_valued("lexeme", "positions").render_derived()
    postings = (
        select(
            matched.c.id,
            lexemes.c.lexeme,
            cast(func.cardinality(lexemes.c.positions), Float).label("tf"),
            cast(matched.c.dl, Float).label("dl"),
            matched.c.updated_at,
        )
        .select_from(matched.join(lexemes, true()))
        .cte("postings")
    )
    df = (
        select(postings.c.lexeme, cast(func.count(), Float).label("df"))
        .group_by(postings.c.lexeme)
        .cte("df")
    )
    # N may lag a cached scope; it can never be below a term's document frequency.
    documents = func.greatest(literal(float(corpus.documents)), df.c.df)
    idf = func.ln(1 + (documents - df.c.df + 0.5) / (df.c.df + 0.5))
    average = max(corpus.average_length, 1.0)
    norm = postings.c.tf + K1 * (1 - B + B * postings.c.dl / average)
    per_term = idf * postings.c.tf * (K1 + 1) / norm
    # Rank and cut before joining back to the rows: the join then reads `limit` rows, not
    # every match (tens of thousands in a large scope).
    bm25 = func.sum(per_term).label("bm25")
    top = (
        select(postings.c.id, postings.c.updated_at, bm25)
        .select_from(postings.join(df, df.c.lexeme == postings.c.lexeme))
        .group_by(postings.c.id, postings.c.updated_at)
        .order_by(bm25.desc(), postings.c.updated_at.desc(), postings.c.id)
        .limit(limit)
        .cte("top")
    )
    stmt = (
        select(*MEMORY_COLUMNS, top.c.bm25)
        .join(top, top.c.id == memories.c.id)
        .order_by(top.c.bm25.desc(), top.c.updated_at.desc(), top.c.id)
    )
    rows = (await conn.execute(stmt)).all()
    return [(row, float(row.bm25)) for row in rows]


def squash(score: float) -> float:
    """Map a BM25 score (>= 0) into [0, 1): s / (s + 1)."""
    return score / (score + 1.0) if score > 0 else 0.0
