"""The MCP server: one tool per envelope command, on the official SDK's low-level ``Server``.

``tools/call`` checks the arguments against the tool's input schema (``arguments.check``), runs the command
(``calls.run_cli``) and returns its envelope unchanged, as text and as structured content, ``isError`` when
it says ``ok: false``; the errors of such an envelope go through ``withhold`` first. An unknown tool is the
JSON-RPC error -32602 (invalid params) naming the close matches; wrong arguments are a tool error (an
envelope the model can read and correct, as the MCP spec asks of input validation errors).
"""

from __future__ import annotations

import difflib
import functools
import json
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS

from gpuopt import __version__
from gpuopt.agent_tools import Tool, argv, input_schema, tools
from gpuopt.mcp_server import arguments, calls
from gpuopt.mcp_server.withhold import withhold
from gpuopt.models.envelope import ErrorItem

P = TypeVar("P")
R = TypeVar("R")


def _contained(
    handler: Callable[[ServerRequestContext[Any], P], Awaitable[R]],
) -> Callable[[ServerRequestContext[Any], P], Awaitable[R]]:
    """A defect in a handler is the JSON-RPC internal error (-32603) naming its type, never a traceback
    (the SDK would answer code 0 with the exception's text and log the traceback)."""

    @functools.wraps(handler)
    async def contained(ctx: ServerRequestContext[Any], params: P) -> R:
        try:
            return await handler(ctx, params)
        except MCPError:
            raise
        except Exception as exc:
            raise MCPError(
                code=INTERNAL_ERROR, message=f"gpuopt mcp: internal error ({type(exc).__name__})"
            ) from None

    return contained


def _catalog() -> dict[str, Tool]:
    from gpuopt.cli import cli

    return {t.name: t for t in tools(cli)}


def _error_envelope(errors: list[ErrorItem]) -> dict[str, Any]:
    """The envelope the CLI prints for an error before any command ran (``gpuopt.error/v1``)."""
    from gpuopt.provenance import provenance
    from gpuopt.schemas import ENVELOPES

    model = ENVELOPES["gpuopt.error/v1"]
    envelope = model(schema="gpuopt.error/v1", ok=False, data=None, errors=errors, provenance=provenance([]))
    return dict(envelope.model_dump(mode="json", by_alias=True))


def _result(envelope: dict[str, Any]) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=json.dumps(envelope, indent=2))],
        structured_content=envelope,
        is_error=not envelope.get("ok", False),
    )


def _file_arguments(values: dict[str, Any]) -> list[str]:
    """Every string argument (list items included): the files among them are searched by ``withhold``."""
    out: list[str] = []
    for value in values.values():
        out += [v for v in (value if isinstance(value, list) else [value]) if isinstance(v, str)]
    return out


def _envelope_of(done: calls.Finished, tool: Tool, values: dict[str, Any]) -> dict[str, Any]:
    try:
        envelope = json.loads(done.stdout)
    except ValueError:
        envelope = None
    if not isinstance(envelope, dict):
        message = (
            f"gpuopt {' '.join(tool.path)} ended with exit status {done.returncode} and no JSON envelope"
        )
        return _error_envelope([ErrorItem(code="internal_error", message=message)])
    errors = envelope.get("errors")
    if envelope.get("ok") is False and isinstance(errors, list) and errors:
        items = [e for e in errors if isinstance(e, dict)]
        envelope["errors"] = withhold(items, _file_arguments(values))
    return envelope


def _unknown_tool(name: str, catalog: dict[str, Tool]) -> MCPError:
    near = difflib.get_close_matches(name, list(catalog), n=3, cutoff=0.6)
    hint = f"; did you mean {' or '.join(near)}?" if near else "; tools/list names them all"
    return MCPError(
        code=INVALID_PARAMS, message=f"no gpuopt tool named {name[:80]!r}{hint}", data={"nearest": near}
    )


def build_server() -> Server[Any]:
    catalog = _catalog()
    schemas = {name: input_schema(t.command) for name, t in catalog.items()}

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=t.name,
                    description=f"gpuopt {' '.join(t.path)}: {t.description}",
                    input_schema=schemas[t.name],
                )
                for t in catalog.values()
            ]
        )

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        tool = catalog.get(params.name)
        if tool is None:
            raise _unknown_tool(params.name, catalog)
        values = dict(params.arguments or {})
        problems = arguments.check(tool.name, schemas[tool.name], values)
        if problems:
            return _result(_error_envelope(problems))
        label = f"gpuopt {' '.join(tool.path)}"

        async def tick(elapsed_s: float) -> None:
            await ctx.session.report_progress(elapsed_s, None, f"{label}: {elapsed_s:.0f} s")

        await ctx.session.report_progress(0.0, None, f"{label}: started")
        try:
            done = await calls.run_cli(argv(tool, values), tick)
        except (OSError, ValueError) as exc:
            message = f"{label} could not be started: {type(exc).__name__}"
            return _result(_error_envelope([ErrorItem(code="internal_error", message=message)]))
        return _result(_envelope_of(done, tool, values))

    return Server(
        "gpuopt",
        version=__version__,
        instructions="gpuopt measures, parses and records GPU evidence; it never chooses what to do next. "
        "Every tool returns the CLI's JSON envelope {schema, ok, data, errors, unmodeled, provenance}.",
        get_tool_input_schema=schemas.get,
        on_list_tools=_contained(list_tools),
        on_call_tool=_contained(call_tool),
    )
