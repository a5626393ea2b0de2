"""`python -m mnemo.kafka.stack --gateways 2`: two gateways behind the same topics, each
on its own port and health URL, the stages after them (issue 39: a kill -9 of the only
gateway left about 24 s with none)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from mnemo.kafka.stack import busy_ports, main, programs
from tests.support.ports import free_block

ROOT = Path(__file__).resolve().parents[3]


def test_two_gateways_on_consecutive_ports_then_the_stages(tmp_path: Path) -> None:
    stack = programs(tmp_path, "services.gateway", 8080, 9100, {"extractor": 2}, gateways=2)
    names = [p.name for p in stack]
    assert names[:2] == ["gateway", "gateway-2"]
    assert [p.health_url for p in stack[:2]] == [
        "http://127.0.0.1:8080/healthz",
        "http://127.0.0.1:8081/healthz",
    ]
    assert [p.env["MNEMO_PORT"] for p in stack[:2]] == ["8080", "8081"]
    assert names[2:] == ["extractor", "extractor-2", "buffer", "transformer", "committer"]
    assert [p.env["MNEMO_METRICS_PORT"] for p in stack[2:]] == [str(9101 + i) for i in range(5)]


def listening() -> socket.socket:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    return sock


def test_a_busy_stage_port_is_named_with_its_program() -> None:
    with listening() as taken:
        port = taken.getsockname()[1]
        # the buffer is the second stage: metrics base + 2
        stack = programs(Path("logs"), "services.gateway", 8080, port - 2, {})
        busy = busy_ports(stack)
    assert [line for line in busy if line.startswith("buffer:")] == [
        f"buffer: port {port}: Address already in use"
    ]
    assert not any(line.startswith(("extractor:", "transformer:")) for line in busy)


def test_a_port_held_by_an_outgoing_connection_is_busy() -> None:
    # What made a CI run's stage crash-loop: a port in the ephemeral range was the local
    # end of some connection when the stage came to bind it.
    with listening() as server, socket.create_connection(server.getsockname()) as client:
        local = client.getsockname()[1]
        stack = programs(Path("logs"), "services.gateway", local, 1, {})
        assert busy_ports(stack)[:1] == [f"gateway: port {local}: Address already in use"]


def test_check_ports_exits_2_and_says_what_moves_the_port(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with listening() as taken:
        port = taken.getsockname()[1]
        with pytest.raises(SystemExit) as exited:
            main(["--log-dir", "logs", "--port", str(port), "--check-ports"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert f"gateway: port {port}: Address already in use" in err
    assert "--port (MNEMO_PORT)" in err and "--metrics-base (MNEMO_METRICS_BASE_PORT)" in err


def test_check_ports_returns_when_every_port_is_free() -> None:
    with listening() as probe:  # a free port, released before the check
        port = probe.getsockname()[1]
    base = free_block(5)
    assert main(["--log-dir", "logs", "--port", str(port), "--metrics-base", str(base),
                 "--check-ports"]) is None  # fmt: skip


def test_the_script_stops_on_a_busy_port_before_it_starts_the_broker(tmp_path: Path) -> None:
    with listening() as taken:
        port = taken.getsockname()[1]
        env = {
            "PATH": os.environ["PATH"], "HOME": str(tmp_path), "PYTHON": sys.executable,
            "PYTHONPATH": os.environ.get("PYTHONPATH", ""), "MNEMO_PORT": str(port),
            "MNEMO_DATA_DIR": str(tmp_path / "data"), "KAFKA_DATA_DIR": str(tmp_path / "kafka"),
        }  # fmt: skip
        done = subprocess.run(
            ["bash", str(ROOT / "scripts" / "run-distributed.sh")],
            env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert f"gateway: port {port}: Address already in use" in done.stderr
    assert not (tmp_path / "kafka").exists() and not (tmp_path / "data").exists()
