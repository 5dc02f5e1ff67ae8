"""``gpuopt mcp`` when the client goes away mid-call: end of input, a broken pipe, SIGTERM, a cancel.

The call is a readiness check whose driver hangs (the fixture driver's ``hang`` mode): the command, the
probe supervisor it starts and the driver (in a session of its own) all run while the client leaves.
Each way of leaving must end the session with exit 0 and no traceback, and leave none of the three
running. The processes are found by the test's own folder in their command lines.
"""

from __future__ import annotations

import json
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import pytest

pytest.importorskip("mcp")

from eval_support import procs, workload
from mcp_wire import START_S, STEP_S, Wire

# Long (real driver loops, a browser, servers): started first, so the test workers end together.
pytestmark = pytest.mark.starts_first

DRIVER_START_S = 60.0  # the readiness check freezes and hashes its inputs before the driver starts


def _hanging_request(tmp_path: Path) -> Path:
    paths = workload.layout(tmp_path / "w", behavior={"mode": "hang"})
    request = tmp_path / "request.json"
    request.write_text(json.dumps(workload.request(paths, tmp_path / "root")))
    return request


def _call_that_hangs(request: Path) -> dict[str, Any]:
    params = {"name": "readiness_check", "arguments": {"request": str(request)}}
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {**params, "_meta": {"progressToken": 1}},
    }


def _driver_running(tmp_path: Path, next_message: Callable[[], object]) -> None:
    """Waits for the driver, reading the call's progress (one a second) so that a silent server fails
    within ``STEP_S``."""
    marker = str(tmp_path / "w" / "behavior")
    deadline = time.monotonic() + DRIVER_START_S
    while not procs.running(marker):
        assert time.monotonic() < deadline, "the driver never started"
        next_message()


def _nothing_left(tmp_path: Path) -> None:
    assert procs.wait_gone(str(tmp_path), STEP_S) == []


@pytest.fixture
def started(tmp_path: Path) -> Any:
    wire = Wire()
    wire.initialize()
    wire.send(json.dumps(_call_that_hangs(_hanging_request(tmp_path))).encode())
    _driver_running(tmp_path, wire.next)
    yield wire
    wire.close()


def test_end_of_input_mid_call_exits_0_and_stops_the_call(started: Wire, tmp_path: Path) -> None:
    ended = started.end()
    assert ended.returncode == 0
    assert "Traceback" not in started.everything() and ended.stderr == ""
    assert [m["id"] for m in ended.messages if "id" in m] in ([], [1])  # at most one answer
    _nothing_left(tmp_path)


def test_sigterm_mid_call_exits_0_and_stops_the_call(started: Wire, tmp_path: Path) -> None:
    started.proc.send_signal(signal.SIGTERM)
    ended = started.wait()
    assert ended.returncode == 0
    assert "Traceback" not in started.everything() and ended.stderr == ""
    _nothing_left(tmp_path)


def test_a_cancelled_call_stops_its_processes_and_the_session_goes_on(started: Wire, tmp_path: Path) -> None:
    started.send(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}')
    _nothing_left(tmp_path)
    started.request(2, "ping")
    assert started.reply(2)["result"] == {}  # the cancelled call is never answered (the spec's rule)
    ended = started.end()
    assert ended.returncode == 0 and ended.messages == [] and ended.stderr == ""


def _line(stream: IO[bytes], timeout_s: float) -> bytes:
    ready, _, _ = select.select([stream], [], [], timeout_s)
    assert ready, f"no line from gpuopt mcp within {timeout_s} s"
    return stream.readline()


def _server() -> subprocess.Popen[bytes]:
    """``gpuopt mcp`` in a child of its own, initialized."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "gpuopt", "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin and proc.stdout and proc.stderr
    info = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    _send(proc, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": info})
    assert json.loads(_line(proc.stdout, START_S))["id"] == 0
    return proc


def _send(proc: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert proc.stdin
    proc.stdin.write(json.dumps(message).encode() + b"\n")
    proc.stdin.flush()


def _stop_reading_and_expect_a_clean_end(proc: subprocess.Popen[bytes], tmp_path: Path) -> None:
    """The client closes its end of the server's stdout (stdin stays open): exit 0, nothing on stderr,
    none of the call's processes left."""
    assert proc.stdin and proc.stdout and proc.stderr
    proc.stdout.close()
    try:
        returncode = proc.wait(timeout=STEP_S)
    finally:
        proc.kill()
        proc.wait()
        proc.stdin.close()
        stderr = proc.stderr.read().decode(errors="replace")
        proc.stderr.close()
    assert returncode == 0 and stderr == ""
    _nothing_left(tmp_path)


def test_a_broken_pipe_mid_call_exits_0_and_stops_the_call(tmp_path: Path) -> None:
    proc = _server()
    _send(proc, _call_that_hangs(_hanging_request(tmp_path)))
    out = proc.stdout
    assert out
    _driver_running(tmp_path, lambda: _line(out, STEP_S))
    # The client stops reading; the next progress notification hits a broken pipe.
    _stop_reading_and_expect_a_clean_end(proc, tmp_path)


def test_a_client_that_stops_reading_during_a_silent_call_is_noticed(tmp_path: Path) -> None:
    # Found by a hostile trial: with no progress token nothing is written during the call, so a client
    # that closed only its reading end went unnoticed until the call ended on its own (22 s there).
    proc = _server()
    call = _call_that_hangs(_hanging_request(tmp_path))
    del call["params"]["_meta"]  # no progress: the server has nothing to write until the call ends
    _send(proc, call)
    _driver_running(tmp_path, lambda: time.sleep(0.2))
    _stop_reading_and_expect_a_clean_end(proc, tmp_path)
