"""The Engine's adds: admission in time and under the load limits, idempotency keys, the
run's trace (its `mnemo.add` span travels with the record) and the write health that
`/readyz` reports (a transient failure to record an add makes the gateway not ready)."""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import replace

from mnemo import metrics
from mnemo.core.admission import check_add, check_event_times
from mnemo.core.dynamics import Dynamics
from mnemo.core.engine_groups import EngineGroups
from mnemo.core.failures import is_transient
from mnemo.core.idempotency import Admission, earlier_run, still_contended
from mnemo.core.readiness import WriteHealth
from mnemo.core.records import RunRecord
from mnemo.core.shedding import Shedder
from mnemo.core.transport import RunTransport
from mnemo.deps import Deps
from mnemo.domain.idempotency import IdempotencyClaim, KeyTaken
from mnemo.domain.memory import Run, RunState
from mnemo.domain.requests import AddRequest
from mnemo.store.database import Database
from mnemo.tracing import spans


class EngineAdds(EngineGroups):
    """Mixed into `Engine` (`mnemo.core.engine`), whose fields these are."""

    database: Database
    deps: Deps
    transport: RunTransport
    shedder: Shedder
    dynamics: Dynamics
    write_health: WriteHealth

    async def add(
        self, project: str, request: AddRequest, idempotency_key: str | None = None
    ) -> Run:
        """Durably record the add and its run; returns once both are committed."""
        return (await self.admit(project, request, idempotency_key)).run

    async def admit(
        self, project: str, request: AddRequest, idempotency_key: str | None = None
    ) -> Admission:
        """`add`, saying whether an earlier add with the same `idempotency_key` (within the
        window, in this project) had started the run: then nothing new is stored. The run's
        trace starts here (`mnemo.add`) and travels with its record."""
        attributes = {"mnemo.project": project, "mnemo.group": request.group}
        with spans.span("mnemo.add", attributes) as span:
            try:
                admission = await self._admit_in_time(project, request, idempotency_key)
            except Exception as exc:
                if is_transient(exc):
                    self.write_health.failed(exc)
                raise
            self.write_health.succeeded()
            span.set("mnemo.run_id", admission.run.run_id)
            return admission

    async def _admit_in_time(
        self, project: str, request: AddRequest, idempotency_key: str | None
    ) -> Admission:
        """A frozen database would hold the add forever: past MNEMO_ADD_TIMEOUT_SECONDS it is
        a TimeoutError, transient (503, Retry-After) like any outage."""
        limit = self.settings.add_timeout_seconds
        try:
            async with asyncio.timeout(limit):
                return await self._admit(project, request, idempotency_key)
        except TimeoutError as exc:
            raise TimeoutError(
                f"the add was not recorded within {limit:g} s (MNEMO_ADD_TIMEOUT_SECONDS): "
                "the database does not answer"
            ) from exc

    async def _admit(
        self, project: str, request: AddRequest, idempotency_key: str | None
    ) -> Admission:
        started = time.perf_counter()
        for _ in range(3):  # a key can only be lost to an add its transport then refused
            if idempotency_key is not None:
                earlier = await earlier_run(
                    self.database.db, project, idempotency_key, request, self.deps.clock.now(),
                    self.settings.idempotency_window_seconds,
                )  # fmt: skip
                if earlier is not None:
                    return Admission(earlier, replayed=True)
            try:
                run = await self._submit(project, request, idempotency_key)
            except KeyTaken:
                continue
            metrics.ADD_LATENCY.observe(time.perf_counter() - started)
            metrics.RUNS.labels(status=RunState.running.value).inc()
            return Admission(run)
        assert idempotency_key is not None
        raise still_contended(idempotency_key)

    async def _submit(self, project: str, request: AddRequest, idempotency_key: str | None) -> Run:
        group = await self._group_for_request(project, request.group)
        check_add(group, request, self.settings.limits)
        now = self.deps.clock.now()
        check_event_times(request, now)
        await self.shedder.admit(project)
        record = RunRecord.new(
            run_id=str(uuid.uuid4()),
            project=project,
            group=group.name,
            config=group,
            input=request.input,
            user_id=request.user_id,
            properties=request.properties,
            root=request.root,
            now=now,
            recalled=request.recalled,
        )
        claim = None
        if idempotency_key is not None:
            claim = IdempotencyClaim.new(
                project, idempotency_key, request, record.run_id, now,
                self.settings.idempotency_window_seconds,
            )  # fmt: skip
        await self.dynamics.before_add(project, group.name, record.user_id)
        record = replace(record, trace=spans.carrier())
        await self.transport.submit(record, claim)
        return record.to_run()
