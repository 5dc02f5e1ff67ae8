"""``gpuopt mcp``: the CLI served as MCP tools over stdio, through the official MCP Python SDK.

Each tool runs the CLI command it is named after (``nsys_kernels`` is ``gpuopt nsys kernels``) in a
child process with ``--json`` and returns that envelope unchanged: as text and as structured content,
``isError`` when the envelope says ``ok: false``. A child process keeps stdout (the MCP channel) clean,
isolates a crash and makes cancellation a kill. While it runs, the server reports progress every second
to a client that asked for it (a progress token): 0 at the start, then the elapsed seconds.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

from gpuopt import __version__
from gpuopt.agent_tools import Tool, argv, input_schema, tools

_PROGRESS_PERIOD_S = 1.0


def _catalog() -> dict[str, Tool]:
    from gpuopt.cli import cli

    return {t.name: t for t in tools(cli)}


async def _run(words: list[str], ctx: ServerRequestContext[Any]) -> tuple[bytes, bytes, int]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "gpuopt",
        *words,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    started = time.monotonic()
    label = f"gpuopt {' '.join(words[:2])}"
    await ctx.session.report_progress(0.0, None, f"{label}: started")
    done = asyncio.ensure_future(proc.communicate())
    try:
        while True:
            finished, _ = await asyncio.wait({done}, timeout=_PROGRESS_PERIOD_S)
            if finished:
                break
            elapsed = time.monotonic() - started
            await ctx.session.report_progress(elapsed, None, f"{label}: {elapsed:.0f} s")
    except BaseException:
        if proc.returncode is None:
            proc.kill()
        raise
    stdout, stderr = done.result()
    return stdout, stderr, proc.returncode or 0


def _error_envelope(code: str, message: str) -> dict[str, Any]:
    return {
        "schema": "gpuopt.error/v1",
        "ok": False,
        "data": None,
        "errors": [{"code": code, "message": message}],
        "unmodeled": [],
        "provenance": None,
    }


def _result(envelope: dict[str, Any]) -> types.CallToolResult:
    text = json.dumps(envelope, indent=2)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=envelope,
        is_error=not envelope.get("ok", False),
    )


def build_server() -> Server[Any]:
    catalog = _catalog()

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=t.name,
                    description=f"gpuopt {' '.join(t.path)}: {t.description}",
                    input_schema=input_schema(t.command),
                )
                for t in catalog.values()
            ]
        )

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        tool = catalog.get(params.name)
        if tool is None:
            return _result(_error_envelope("tool_unknown", f"no gpuopt tool named {params.name!r}"))
        arguments = dict(params.arguments or {})
        stdout, stderr, _rc = await _run(argv(tool, arguments), ctx)
        try:
            envelope = json.loads(stdout)
        except ValueError:
            tail = stderr.decode(errors="replace").strip()[-2000:]
            return _result(_error_envelope("internal_error", f"no JSON envelope from gpuopt: {tail}"))
        return _result(envelope)

    return Server(
        "gpuopt",
        version=__version__,
        instructions="gpuopt measures, parses and records GPU evidence; it never chooses what to do next. "
        "Every tool returns the CLI's JSON envelope {schema, ok, data, errors, unmodeled, provenance}.",
        get_tool_input_schema=lambda name: input_schema(catalog[name].command) if name in catalog else None,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve_stdio() -> None:
    server = build_server()
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
