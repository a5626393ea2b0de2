"""Okapi BM25 over Postgres full text, computed in one query.

Terms are the query's English lexemes. A document's length is its count of English lexeme
occurrences (`tsv_length`, stop words excluded; not its distinct lexemes, which made long
documents look short); N and the average length of the filtered scope come from
`corpus_stats` (cached for large scopes). A term's document frequency is counted among the
scope's postings of that term, i.e. in the whole filtered scope.

Postings (memory, lexeme, tf, dl) come from one of two sources, ranked by the same query:
- `indexed_postings`: the `memory_terms` table a trigger keeps for searchable memories
  (migration 0014), read through one covering index: the searches of "now";
- `document_postings`: the query's lexemes of each matching document's tsvector (GIN
  index, then unnest): as-of searches, whose past states have no postings table.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    ColumnElement,
    Float,
    Numeric,
    Select,
    any_,
    cast,
    func,
    literal,
    literal_column,
    over,
    select,
    true,
)
from sqlalchemy.sql.elements import ColumnClause
from sqlalchemy.sql.selectable import TableValuedAlias
from sqlalchemy.sql.visitors import replacement_traverse

from mnemo.store.corpus_stats import CorpusStats
from mnemo.store.rows import MEMORY_COLUMNS
from mnemo.store.schema import TERM_CHARS, memories, memory_terms

K1 = 1.2
B = 0.75
RANK_PLACES = 9


def lexemes_of(text_: str) -> TableValuedAlias:
    """The text's distinct English lexemes as rows of `lexeme` (a table-valued function)."""
    return (
        func.unnest(func.tsvector_to_array(func.to_tsvector("english", text_)))
        .table_valued("lexeme")
        .render_derived()
    )


def _or_query(text_: str) -> ColumnElement[Any]:
    """Any of the text's English lexemes. Each is quoted (URLs and odd tokens stay literal)
    and parsed with the `simple` config so it is not stemmed twice; a text without lexemes
    (e.g. only punctuation or stop words) gives an empty query that matches nothing."""
    lexeme = lexemes_of(text_)
    joined = (
        select(func.string_agg(func.quote_literal(lexeme.c.lexeme), " | "))
        .select_from(lexeme)
        .scalar_subquery()
    )
    return func.to_tsquery("simple", func.coalesce(joined, ""))


def on_terms(where: ColumnElement[bool]) -> ColumnElement[bool]:
    """A WHERE clause written against `memories` (store/tenancy.py), over `memory_terms`,
    which copies the scope columns it filters on (project, group, topic, user_id,
    properties, status) under the same names."""

    def swap(element: Any, **_: Any) -> Any:
        if isinstance(element, ColumnClause) and element.table is memories:
            name = "memory_id" if element.name == "id" else element.name
            if name not in memory_terms.c:
                raise ValueError(f"memory_terms has no column for memories.{element.name}")
            return memory_terms.c[name]
        return None

    replaced: ColumnElement[bool] = replacement_traverse(where, {}, swap)
    return replaced


def indexed_postings(where: ColumnElement[bool], text_: str) -> Select[Any]:
    """The scope's postings of the query's lexemes, from `memory_terms`."""
    lexeme = lexemes_of(text_)
    terms = select(func.left(lexeme.c.lexeme, TERM_CHARS)).select_from(lexeme).scalar_subquery()
    return select(
        memory_terms.c.memory_id.label("id"),
        memory_terms.c.lexeme,
        cast(memory_terms.c.tf, Float).label("tf"),
        cast(memory_terms.c.dl, Float).label("dl"),
        memory_terms.c.updated_at,
    ).where(on_terms(where), memory_terms.c.lexeme == any_(func.array(terms)))


def document_postings(where: ColumnElement[bool], text_: str) -> Select[Any]:
    """The same postings read from each matching document's tsvector."""
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
    return select(
        matched.c.id,
        lexemes.c.lexeme,
        cast(func.cardinality(lexemes.c.positions), Float).label("tf"),
        cast(matched.c.dl, Float).label("dl"),
        matched.c.updated_at,
    ).select_from(matched.join(lexemes, true()))


def idf_of(df: ColumnElement[Any], corpus: CorpusStats) -> ColumnElement[Any]:
    """A term's idf from its document frequency `df` (float) in the filtered scope."""
    # N may lag a cached scope; it can never be below a term's document frequency.
    documents = func.greatest(literal(float(corpus.documents)), df)
    return func.ln(1 + (documents - df + 0.5) / (df + 0.5))


def posting_score(
    idf: ColumnElement[Any], tf: ColumnElement[Any], dl: ColumnElement[Any], corpus: CorpusStats
) -> ColumnElement[Any]:
    """One posting's BM25 contribution (tf and dl as floats): below idf * (k1 + 1), since
    tf / (tf + K) < 1 for any K > 0 (the bound store/bm25_topk.py prunes with)."""
    average = max(corpus.average_length, 1.0)
    norm = tf + K1 * (1 - B + B * dl / average)
    return idf * tf * (K1 + 1) / norm


def ranked(postings: Select[Any], limit: int, corpus: CorpusStats) -> Select[Any]:
    """Rows (MEMORY_COLUMNS + bm25) of the `limit` best-scoring memories among `postings`
    (columns id, lexeme, tf, dl, updated_at), best first; ties go to the newest."""
    rows = postings.subquery("postings")
    df = cast(over(func.count(), partition_by=rows.c.lexeme), Float)
    counted = select(rows, df.label("df")).subquery("counted")
    idf = idf_of(counted.c.df, corpus)
    score = func.sum(posting_score(idf, counted.c.tf, counted.c.dl, corpus))
    # Ranked on the score rounded to 9 places: the two posting sources sum a memory's terms
    # in different orders, and the last bits of equal scores must not decide their order.
    rank = func.round(cast(score, Numeric), RANK_PLACES)
    # Rank and cut before joining back to the rows: the join then reads `limit` rows, not
    # every match (thousands in a large scope).
    top = (
        select(counted.c.id, counted.c.updated_at, score.label("bm25"), rank.label("rank"))
        .group_by(counted.c.id, counted.c.updated_at)
        .order_by(rank.desc(), counted.c.updated_at.desc(), counted.c.id)
        .limit(limit)
        .cte("top")
    )
    return (
        select(*MEMORY_COLUMNS, top.c.bm25)
        .join(top, top.c.id == memories.c.id)
        .order_by(top.c.rank.desc(), top.c.updated_at.desc(), top.c.id)
    )


async def bm25_search(
    conn: Any,
    where: ColumnElement[bool],
    text_: str,
    limit: int,
    corpus: CorpusStats,
    indexed: bool = True,
) -> list[tuple[Any, float]]:
    """Rows (MEMORY_COLUMNS + bm25) best first, with the raw BM25 score (>= 0).

    `corpus` gives N and the average length of the filtered scope (see corpus_stats);
    `indexed` reads the postings table, else the documents (as-of reads: `conn` then
    rewrites `memories` to a past state, which the postings table does not have)."""
    source = indexed_postings if indexed else document_postings
    rows = (await conn.execute(ranked(source(where, text_), limit, corpus))).all()
    return [(row, float(row.bm25)) for row in rows]


def squash(score: float) -> float:
    """Map a BM25 score (>= 0) into [0, 1): s / (s + 1)."""
    return score / (score + 1.0) if score > 0 else 0.0
