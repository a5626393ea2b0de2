"""Admission limits: how much one request may ask of the store, the embedder and the LLM.

Configurable ones live in `InputLimits` (`MNEMO_LIMITS_*`, the `limits` section of the
settings); their ceilings keep every raised value storable. Fixed ones are plain constants
enforced by the request models. Both are checked when a request is accepted, so nothing a
limit refuses ever reaches a pipeline.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

# A memory's text: Postgres refuses a tsvector over 1 MB (SQLSTATE 54000). Adversarial text
# (distinct one-character words of a 4-byte script) measured 6.0 tsvector bytes per
# character (93,743 characters: 562 KB), so 100,000 characters stay under that and are the
# most any setting may allow.
MEMORY_CHARS_CEILING = 100_000
# User ids, property keys and values: short identifiers, not documents.
USER_ID_CHARS = 256
PROPERTY_KEY_CHARS = 64
PROPERTY_VALUE_CHARS = 1_024
# Topic and group names follow the topic name pattern (at most 64 characters).
NAME_CHARS = 64
# A group's description (topic descriptions have the same cap).
DESCRIPTION_CHARS = 4_000
# JSON request bodies: Engram documents are a few levels deep; a deep document only costs
# recursion in every layer that walks it (900 levels used to reset the connection).
JSON_DEPTH = 64


class InputLimits(BaseModel):
    """Per-request limits an operator may raise (`MNEMO_LIMITS_<FIELD>`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # Characters of one pre_extracted item (a memory as it is stored). 4,000 is a few
    # paragraphs: a fact or a summary. The local embedder reads only the first 256 word
    # pieces, and OpenAI's embedders take 8,191 tokens (4,000 characters stay below even
    # at two tokens per character).
    memory_chars: int = Field(default=4_000, ge=1, le=MEMORY_CHARS_CEILING)
    # Characters of all the text of one add (strings, message contents or items). One
    # extract call sends an add to the LLM whole: 100,000 characters are ~25k tokens,
    # within the context of common models, and bound the offline provider's sentence
    # comparisons.
    add_chars: int = Field(default=100_000, ge=1, le=10_000_000)
    # Messages, strings or items in one add.
    add_units: int = Field(default=500, ge=1, le=100_000)
    # Keys of one `properties` object (of an add, a search, a list or a topic selector).
    properties: int = Field(default=32, ge=1, le=1_000)
    # Entries of `topics` in one search or list; each is a clause of the query.
    topic_selectors: int = Field(default=100, ge=1, le=10_000)
    # Groups of one project, topics of one group and steps of one pipeline, checked by
    # PUT /v1/groups/{name} (every extract prompt lists the group's topics).
    groups_per_project: int = Field(default=200, ge=1, le=100_000)
    topics_per_group: int = Field(default=100, ge=1, le=10_000)
    pipeline_steps: int = Field(default=32, ge=1, le=1_000)
    # Characters of one step's instructions, sent with every LLM call of the step:
    # 16,000 characters are ~4k tokens.
    instructions_chars: int = Field(default=16_000, ge=1, le=1_000_000)
