"""``gpuopt mcp``: a real MCP client session from the official SDK, over stdio, against the real server."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

mcp = pytest.importorskip("mcp")

from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402


async def _session(work: Any) -> Any:
    params = StdioServerParameters(command=sys.executable, args=["-m", "gpuopt", "mcp"])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        return await work(session)


def _run(work: Any) -> Any:
    return anyio.run(_session, work)


def test_tools_are_the_cli_commands_with_generated_schemas() -> None:
    async def work(session: ClientSession) -> Any:
        return (await session.list_tools()).tools

    tools = {t.name: t for t in _run(work)}
    for name in ("nsys_kernels", "nsys_timeline", "torch_ops", "ncu_launches", "sass_functions", "baseline"):
        assert name in tools
    assert "mcp" not in tools and "skill_show" not in tools
    kernels = tools["nsys_kernels"].input_schema
    assert kernels["required"] == ["files"]  # one export, several, or a glob
    assert kernels["properties"]["files"]["type"] == "array"
    assert kernels["properties"]["limit"] == {
        "type": "integer",
        "minimum": 0,
        "maximum": 2**63 - 1,  # what the native code's integers hold
        "default": 50,
        "description": "Rows to show or put in the JSON envelope (0 = all).",
    }
    assert kernels["properties"]["short_names"]["type"] == "boolean"


def test_call_returns_the_cli_envelope_with_progress(shared: Path) -> None:
    file = shared / "h200" / "nsys" / "eager.sqlite"
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async def work(session: ClientSession) -> Any:
        return await session.call_tool(
            "nsys_kernels", {"files": [str(file)], "limit": 2}, progress_callback=on_progress
        )

    result = _run(work)
    assert result.is_error is False
    envelope = result.structured_content
    assert envelope["schema"] == "gpuopt.nsys.table/v1" and envelope["ok"] is True
    table = envelope["data"]["table"]
    assert table["total_rows"] == 7 and len(table["rows"]) == 2
    top = table["rows"][0]
    assert top["name"] == "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT"
    assert (top["total_time_ns"], top["instances"]) == (4421779, 64)
    assert envelope["provenance"]["inputs"][0]["path"].endswith("eager.sqlite")
    assert progress[0] == 0.0  # the start notification, then one per second of work


def test_bad_input_returns_the_typed_error(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"not a database" * 100)

    async def work(session: ClientSession) -> Any:
        return await session.call_tool("nsys_kernels", {"files": [str(garbage)]})

    result = _run(work)
    assert result.is_error is True
    envelope = result.structured_content
    assert envelope["ok"] is False
    assert envelope["errors"][0]["code"] == "format_invalid"
    assert envelope["errors"][0]["path"] == str(garbage)


def test_arguments_outside_the_schema_are_refused() -> None:
    async def work(session: ClientSession) -> Any:
        return await session.call_tool("nsys_kernels", {"files": ["x.sqlite"], "limit": -1})

    result = _run(work)
    assert result.is_error is True


def test_without_the_mcp_package_it_exits_3_naming_the_extra() -> None:
    import subprocess

    code = "import sys; sys.modules['mcp'] = None; from gpuopt.cli import main; main(['mcp'])"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 3, done.stderr
    assert "error[tool_absent]" in done.stderr and "pip install 'gpuopt[mcp]'" in done.stderr
    assert "Traceback" not in done.stderr
