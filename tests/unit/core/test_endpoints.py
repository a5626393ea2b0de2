"""EndpointChecks: failing probes are named, re-probed only after RECHECK_SECONDS, and a
probe that raises something unexpected is a failing check, not a crash."""

from __future__ import annotations

from mnemo.core.endpoints import RECHECK_SECONDS, EndpointChecks, EndpointProblem


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Flaky:
    """A probe that fails until told to work, counting its calls."""

    def __init__(self) -> None:
        self.works = False
        self.calls = 0

    async def __call__(self) -> str:
        self.calls += 1
        if not self.works:
            raise EndpointProblem("http://llm:8000/v1 is unreachable")
        return "answers"


async def test_a_failing_probe_is_a_named_failing_check() -> None:
    async def fine() -> str:
        return "ok at http://e"

    checks = EndpointChecks({"llm": Flaky(), "embedder": fine}, clock=Clock())
    results = await checks.run()
    assert [(c.name, c.ok) for c in results] == [("llm", False), ("embedder", True)]
    assert "unreachable" in results[0].detail


async def test_failing_checks_are_probed_again_only_after_the_interval() -> None:
    clock, probe = Clock(), Flaky()
    checks = EndpointChecks({"llm": probe}, clock=clock)
    await checks.run()
    clock.now += RECHECK_SECONDS / 2
    assert not (await checks.current())[0].ok
    assert probe.calls == 1  # too soon: the cached failure
    probe.works = True
    clock.now += RECHECK_SECONDS
    assert (await checks.current())[0].ok
    assert probe.calls == 2
    clock.now += 10 * RECHECK_SECONDS
    await checks.current()
    assert probe.calls == 2  # a passing check is not probed again


async def test_an_unexpected_error_is_a_failing_check() -> None:
    async def broken() -> str:
        raise KeyError("choices")

    [check] = await EndpointChecks({"llm": broken}, clock=Clock()).run()
    assert not check.ok and "choices" in check.detail
