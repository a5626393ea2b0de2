"""mnemo extension: erase everything stored about one user (GDPR right to erasure)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path
from pydantic import AfterValidator

from mnemo.api.deps import GrantedDep
from mnemo.api.schemas import Erased
from mnemo.domain.limits import USER_ID_CHARS
from mnemo.domain.scope import check_user_id

router = APIRouter(prefix="/v1/users", tags=["mnemo extensions"])


@router.delete("/{user_id}", response_model=Erased)
async def erase_user(
    user_id: Annotated[
        str,
        Path(min_length=1, max_length=USER_ID_CHARS, pattern=r"\S"),
        AfterValidator(check_user_id),
    ],
    granted: GrantedDep,
) -> Erased:
    """Erase everything of `user_id` in the caller's project: memories, their versions,
    drafts, buffered items and queued records; the user's runs keep their ids and statuses
    but lose their content (runs still queued or in flight end `failed`). A tombstone keeps
    anything in flight or in Kafka's logs from bringing the user back; a later add for the
    same user id starts afresh."""
    report = await granted.erase_user(user_id)
    return Erased.model_validate(report.model_dump())
