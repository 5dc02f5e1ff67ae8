"""A raw MCP client for the tests: ``gpuopt mcp`` as a child process, bytes in, JSON lines out.

Every wait has a guard (``STEP_S``, 5 s without a message), so a server that hangs fails the test instead
of stalling it; tool calls ask for progress, whose notifications (one a second) show a long call alive.
Only the first reply also waits for the server to start (imports), which a loaded machine makes slower.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import IO, Any

STEP_S = 5.0
START_S = 30.0
CALL_S = 120.0
PROTOCOL = "2025-06-18"


@dataclass
class Ended:
    """How the server ended: exit status, the messages it wrote after the last read, all of stderr."""

    returncode: int
    messages: list[dict[str, Any]]
    stderr: str


class Wire:
    """One ``gpuopt mcp`` process, driven line by line."""

    def __init__(self, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gpuopt", "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **(env or {})},
        )
        assert self.proc.stdin and self.proc.stdout and self.proc.stderr
        self.stdin: IO[bytes] = self.proc.stdin
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.err: list[bytes] = []
        self.raw_out: list[bytes] = []
        threading.Thread(target=self._pump, args=(self.proc.stdout,), daemon=True).start()
        self._err_thread = threading.Thread(target=self._drain, args=(self.proc.stderr,), daemon=True)
        self._err_thread.start()

    def _pump(self, stream: IO[bytes]) -> None:
        with stream:
            for line in stream:
                self.raw_out.append(line)
                self.lines.put(line)
        self.lines.put(None)

    def _drain(self, stream: IO[bytes]) -> None:
        with stream:
            self.err.extend(iter(lambda: stream.read(65536), b""))

    def send(self, raw: bytes) -> None:
        self.stdin.write(raw if raw.endswith(b"\n") else raw + b"\n")
        self.stdin.flush()

    def request(self, request_id: int | str, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(json.dumps(message).encode())

    def next(self, timeout_s: float = STEP_S) -> dict[str, Any]:
        try:
            line = self.lines.get(timeout=timeout_s)
        except queue.Empty:
            raise AssertionError(f"no message from gpuopt mcp within {timeout_s} s") from None
        assert line is not None, "gpuopt mcp closed stdout"
        message: dict[str, Any] = json.loads(line)
        return message

    def reply(self, request_id: int | str | None, timeout_s: float = STEP_S) -> dict[str, Any]:
        """The reply to ``request_id``, skipping notifications; any other reply is a failure. Each message
        must come within ``timeout_s``: a long call stays alive by its progress notifications (one a
        second), a silent server fails; ``CALL_S`` bounds the whole wait."""
        deadline = time.monotonic() + CALL_S
        while True:
            message = self.next(timeout_s)
            if "method" in message:
                assert time.monotonic() < deadline, f"no reply to {request_id!r} within {CALL_S} s"
                continue
            assert message.get("id") == request_id, message
            return message

    def error_code(self, request_id: int | str | None) -> int:
        message = self.reply(request_id)
        assert "error" in message, message
        code: int = message["error"]["code"]
        return code

    def initialize(self) -> dict[str, Any]:
        info = {"name": "wire", "version": "0"}
        self.request(0, "initialize", {"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": info})
        reply = self.reply(0, START_S)
        self.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        return reply

    def call(self, request_id: int, tool: str, arguments: Any, progress: bool = False) -> None:
        params: dict[str, Any] = {"name": tool, "arguments": arguments}
        if progress:
            params["_meta"] = {"progressToken": f"p{request_id}"}
        self.request(request_id, "tools/call", params)

    def tool_result(self, request_id: int, tool: str, arguments: Any) -> dict[str, Any]:
        self.call(request_id, tool, arguments, progress=True)
        result: dict[str, Any] = self.reply(request_id)["result"]
        return result

    def end(self, timeout_s: float = STEP_S) -> Ended:
        """Closes stdin (end of input) and collects the exit status and the rest of the output."""
        self.stdin.close()
        return self.wait(timeout_s)

    def wait(self, timeout_s: float = STEP_S) -> Ended:
        try:
            returncode = self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(
                f"gpuopt mcp did not exit within {timeout_s} s of the end of input"
            ) from None
        messages = []
        while (line := self.lines.get(timeout=STEP_S)) is not None:
            messages.append(json.loads(line))
        self._err_thread.join(STEP_S)
        return Ended(returncode, messages, b"".join(self.err).decode(errors="replace"))

    def close(self) -> None:
        """Kills a server that is still running and closes the pipes (the fixture's teardown)."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        if not self.stdin.closed:
            with contextlib.suppress(BrokenPipeError):
                self.stdin.close()
        self._err_thread.join(STEP_S)

    def everything(self) -> str:
        """All stdout and stderr so far, as text."""
        return (b"".join(self.raw_out) + b"".join(self.err)).decode(errors="replace")
