"""What an erasure removed, and the words a redacted run carries."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel

# The error of a run that was queued or in flight when its user was erased.
STOPPED_RUN_ERROR = (
    "Erased: the user's data was erased before this run finished; nothing it carried was kept"
)
# The error of a failed run whose user was erased (its original error could quote the input).
ERASED_RUN_ERROR = "Erased: the user's data was erased; the original error went with it"
# The error of runs that shared a batch with an erased user's runs and were not committed.
WITHDRAWN_RUN_ERROR = (
    "Withdrawn: this run's batch also held data of a user erased meanwhile, so nothing of it "
    "was committed; retry the run"
)


class ErasureReport(BaseModel):
    """`DELETE /v1/users/{user_id}`: what the erase removed or redacted, by kind.

    `erased` (= `memories`) is the field older clients read.
    """

    erased: int = 0
    memories: int = 0
    versions: int = 0
    drafts: int = 0
    buffer_items: int = 0
    bus_records: int = 0
    runs_redacted: int = 0
    runs_stopped: int = 0
    # When the clean-up committed: from then on nothing of the user is readable.
    completed_at: datetime | None = None
