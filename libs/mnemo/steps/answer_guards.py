"""Guards on destructive model output (issue 32), one rule for both modes.

A reconcile, consolidate or reconsolidate answer is refused as a whole, before anything is
written, when it would
- name a memory id it was not shown (a target the model invented or copied wrongly);
- rewrite a memory to empty or placeholder text ("", "N/A", "[deleted]", "...");
- delete more than `max_share` of the memories it was shown (at least MIN_DELETES of them:
  superseding one or two old facts is reconcile's ordinary work).
The run then fails with `UnsafeAnswer`, its raw input kept, so `POST /v1/runs/{id}/retry`
can run it again (a model's next answer usually differs); nothing of it is committed.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable

from mnemo.contracts.llm import LLMError

MIN_DELETES = 3
_PLACEHOLDER = re.compile(
    r"^\W*(?:n/?a|none|null|nil|tbd|todo|placeholder|deleted|removed|empty|redacted|"
    r"no content|content|memory|text|\.\.\.|…)?\W*$|^\s*[\[<{].*[\]>}]\s*$",
    re.IGNORECASE,
)


class UnsafeAnswer(LLMError):
    """A model answer that would destroy memories; the run fails and nothing is written."""


def is_placeholder(text: str | None) -> bool:
    """Empty, punctuation only, or a stand-in such as "N/A", "[deleted]", "<memory>"."""
    return text is None or bool(_PLACEHOLDER.match(text))


def check_ids(task: str, named: Iterable[str], shown: Collection[str]) -> None:
    unknown = sorted({i for i in named if i not in shown})
    if unknown:
        raise UnsafeAnswer(
            f"{task}: the model named memory ids it was not shown ({', '.join(unknown[:5])}); "
            "nothing was written, retry the run"
        )


def check_rewrites(task: str, contents: Iterable[str | None]) -> None:
    for content in contents:
        if is_placeholder(content):
            raise UnsafeAnswer(
                f"{task}: the model rewrote a memory to empty or placeholder text "
                f"({(content or '')[:40]!r}); nothing was written, retry the run"
            )


def check_share(task: str, deleted: int, shown: int, max_share: float) -> None:
    if deleted >= MIN_DELETES and shown and deleted / shown > max_share:
        raise UnsafeAnswer(
            f"{task}: the model would delete {deleted} of the {shown} memories it was shown "
            f"(more than the destructive_max_share {max_share:g}); nothing was written, "
            "retry the run"
        )
