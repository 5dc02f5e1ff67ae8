"""``gpuopt mcp``: the CLI served as MCP tools over stdio, through the official MCP Python SDK.

Each tool runs the CLI command it is named after (``nsys_kernels`` is ``gpuopt nsys kernels``) in a child
process with ``--json`` and returns that envelope unchanged (``server``). The SDK serves the protocol; the
stdio channel is this package's own (``stdio``: framing, a 16 MiB cap per message, a JSON-RPC error for
every malformed line, clean ends on EOF, a broken pipe or a signal), and so is the life of each call's
processes (``calls``). references/agents.md says why.
"""

from __future__ import annotations

import logging
import sys
import threading

from gpuopt.mcp_server.server import build_server
from gpuopt.mcp_server.stdio import stdio_channel

__all__ = ["build_server", "serve_stdio"]


class _OneLine(logging.Formatter):
    """A log record as one line: no traceback, whatever the SDK logs with ``exc_info``."""

    def format(self, record: logging.LogRecord) -> str:
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        return super().format(record).replace("\n", " ")


def _one_line(what: str, exc: BaseException | None) -> None:
    print(f"gpuopt mcp: {what}: {type(exc).__name__}: {exc}", file=sys.stderr)


def _quiet_logs() -> None:
    """stderr is the client's log: the SDK's and asyncio's records, an exception in a thread or one
    ignored at shutdown are each one line there, never a traceback."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLine("gpuopt mcp: %(name)s: %(message)s"))
    for name in ("mcp", "asyncio"):
        log = logging.getLogger(name)
        log.handlers = [handler]
        log.setLevel(logging.WARNING)
        log.propagate = False
    sys.unraisablehook = lambda u: _one_line("ignored", u.exc_value)
    threading.excepthook = lambda t: _one_line(f"thread {t.thread.name if t.thread else '?'}", t.exc_value)


async def serve_stdio() -> None:
    """Serves until the client ends the session (EOF, a broken pipe, SIGINT or SIGTERM)."""
    _quiet_logs()
    server = build_server()
    async with stdio_channel() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
