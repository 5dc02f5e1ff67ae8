"""``gpuopt mcp`` against malformed and hostile input: raw bytes on its stdin, JSON-RPC replies on stdout.

Every request with an id gets exactly one reply with that id and the JSON-RPC 2.0 error code the spec
names; notifications get none; nothing ever prints a traceback; end of input exits 0. Each wait is
guarded (``mcp_wire.STEP_S``), so a server that goes silent fails instead of hanging.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from conftest import gpuopt
from mcp_wire import Wire

# Long (real driver loops, a browser, servers): started first, so the test workers end together.
pytestmark = pytest.mark.starts_first

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
CAP = 16 * 1024 * 1024


@pytest.fixture
def wire() -> Iterator[Wire]:
    w = Wire()
    w.initialize()
    yield w
    w.close()


def _ends_cleanly(w: Wire, replies_after: int = 0) -> None:
    """End of input: exit 0, no traceback anywhere, and no reply nobody asked for."""
    ended = w.end()
    assert ended.returncode == 0, ended.stderr
    assert len([m for m in ended.messages if "id" in m]) == replies_after, ended.messages
    assert "Traceback" not in w.everything()
    assert ended.stderr == ""


def _call(tool: str, arguments: dict[str, Any], request_id: int = 1) -> bytes:
    params = {"name": tool, "arguments": arguments}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}).encode()


def test_a_lone_surrogate_is_a_parse_error_with_the_id(wire: Wire) -> None:
    wire.send(_call("nsys_kernels", {"files": ["PLACEHOLDER"]}, 7).replace(b"PLACEHOLDER", b"\\ud800"))
    assert wire.error_code(7) == PARSE_ERROR
    wire.send(b'{"jsonrpc":"2.0","id":"s","method":"ping","params":{"k":"\\udc80"}}')
    assert wire.error_code("s") == PARSE_ERROR
    wire.request(8, "ping")
    assert wire.reply(8)["result"] == {}  # still serving
    _ends_cleanly(wire)


def test_not_json_not_utf8_and_no_numbers_are_parse_errors(wire: Wire) -> None:
    wire.send(b'{"jsonrpc":"2.0","id":1,"method":"ping",')  # cut after the id: the id is still found
    assert wire.error_code(1) == PARSE_ERROR
    wire.send(b"{not json")
    assert wire.error_code(None) == PARSE_ERROR
    wire.send(b'{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":"\xff\xfe"}}')
    assert wire.error_code(2) == PARSE_ERROR
    wire.send(b'{"jsonrpc":"2.0","id":3,"method":"ping","params":{"x":NaN}}')
    assert wire.error_code(3) == PARSE_ERROR
    wire.send(b'{"jsonrpc":"2.0","id":4,"method":"ping","params":{"x":"a\x00b"}}')  # a raw NUL byte
    assert wire.error_code(4) == PARSE_ERROR
    wire.send(b'{"jsonrpc":"2.0","id":5,"method":"ping","params":' + b"[" * 100_000 + b"]" * 100_000 + b"}")
    assert wire.error_code(5) == PARSE_ERROR
    _ends_cleanly(wire)


MALFORMED: list[tuple[bytes, Any, int]] = [
    (b"[1, 2]", None, INVALID_REQUEST),  # a batch: not MCP
    (b"[]", None, INVALID_REQUEST),
    (b"42", None, INVALID_REQUEST),
    (b'"ping"', None, INVALID_REQUEST),
    (b"null", None, INVALID_REQUEST),
    (b'{"jsonrpc":"2.0","id":3}', 3, INVALID_REQUEST),  # no method
    (b'{"jsonrpc":"2.0","id":3,"method":7}', 3, INVALID_REQUEST),
    (b'{"jsonrpc":"1.0","id":4,"method":"ping"}', 4, INVALID_REQUEST),
    (b'{"id":4,"method":"ping"}', 4, INVALID_REQUEST),  # no jsonrpc member
    (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', None, INVALID_REQUEST),
    (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', None, INVALID_REQUEST),
    (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', None, INVALID_REQUEST),
    (b'{"jsonrpc":"2.0","method":1,"params":"bar"}', None, INVALID_REQUEST),  # the spec's example
    (b'{"jsonrpc":"2.0","id":5,"method":"ping","params":"bar"}', 5, INVALID_REQUEST),
    (b'{"jsonrpc":"2.0","id":5,"method":"ping","params":[1]}', 5, INVALID_PARAMS),
    (b'{"jsonrpc":"2.0","id":6,"method":"no/such/method"}', 6, METHOD_NOT_FOUND),
    (b'{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"arguments":{}}}', "x", INVALID_PARAMS),
    (
        b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"nsys_kernels","arguments":[1]}}',
        7,
        INVALID_PARAMS,
    ),
]


def test_each_malformed_request_gets_the_spec_error(wire: Wire, subtests: pytest.Subtests) -> None:
    """One server takes every malformed message in turn: each gets its error, and the server goes on."""
    for raw, request_id, code in MALFORMED:
        with subtests.test(raw=raw):
            wire.send(raw)
            assert wire.error_code(request_id) == code
    wire.request("after", "ping")
    assert wire.reply("after")["result"] == {}
    _ends_cleanly(wire)


def test_notifications_are_never_answered(wire: Wire) -> None:
    wire.send(b'{"jsonrpc":"2.0","method":"notifications/unknown"}')
    wire.send(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}')
    wire.send(b'{"jsonrpc":"1.0","method":"notifications/initialized"}')
    wire.send(b'{"jsonrpc":"2.0","method":"ping","params":"bar"}')
    wire.send(b"")  # a blank line is nothing
    wire.send(b'{"jsonrpc":"2.0","id":1,"result":{}}')  # a response to nothing of ours
    wire.request(2, "ping")
    assert wire.reply(2)["result"] == {}
    _ends_cleanly(wire)


def test_a_message_over_the_cap_is_refused_without_holding_it(wire: Wire) -> None:
    before = _peak_rss_bytes(wire.proc.pid)
    big = _call("nsys_kernels", {"files": ["a" * (64 * 1024 * 1024)]}, 11)
    wire.send(big)
    reply = wire.reply(11)
    assert reply["error"]["code"] == INVALID_REQUEST and reply["error"]["data"] == {"limit_bytes": CAP}
    assert _peak_rss_bytes(wire.proc.pid) - before < 48 * 1024 * 1024  # read in pieces: never 64 MB at once
    wire.send(b'{"params":{"x":"' + b"b" * (CAP + 10) + b'"}}')  # no id before the cut: null
    assert wire.error_code(None) == INVALID_REQUEST
    wire.request(12, "ping")
    assert wire.reply(12)["result"] == {}
    _ends_cleanly(wire)


def _peak_rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def _tool_error(wire: Wire, request_id: int, tool: str, arguments: Any) -> list[dict[str, Any]]:
    result = wire.tool_result(request_id, tool, arguments)
    assert result["isError"] is True
    envelope = result["structuredContent"]
    assert envelope["schema"] == "gpuopt.error/v1" and envelope["ok"] is False
    assert json.loads(result["content"][0]["text"]) == envelope
    errors: list[dict[str, Any]] = envelope["errors"]
    return errors


def test_unknown_arguments_are_refused_naming_the_accepted_ones(wire: Wire) -> None:
    (error,) = _tool_error(wire, 1, "nsys_kernels", {"files": ["x.sqlite"], "limt": 3})
    assert error["code"] == "argument_unknown" and error["path"] == "limt"
    assert "did you mean 'limit'?" in error["message"]
    assert error["expected"].startswith("files, window, nvtx, short_names")  # the CLI's --nvtx
    (error,) = _tool_error(wire, 2, "nsys_kernels", {"files": ["x.sqlite"], "zzzz": 1})
    assert "did you mean" not in error["message"] and "it takes: files, window" in error["message"]
    _ends_cleanly(wire)


MISTYPED: list[tuple[dict[str, Any], str, str, str]] = [
    (
        {"files": ["x"], "limit": "5"},
        "argument_invalid",
        "limit",
        "an integer >= 0 and <= 9223372036854775807",
    ),
    (
        {"files": ["x"], "limit": -1},
        "argument_invalid",
        "limit",
        "an integer >= 0 and <= 9223372036854775807",
    ),
    (
        {"files": ["x"], "limit": True},
        "argument_invalid",
        "limit",
        "an integer >= 0 and <= 9223372036854775807",
    ),
    # Found by a hostile trial: 10**400 reached the command and ended in internal_error.
    (
        {"files": ["x"], "limit": 10**400},
        "argument_invalid",
        "limit",
        "an integer >= 0 and <= 9223372036854775807",
    ),
    ({"files": "x.sqlite"}, "argument_invalid", "files", "an array of strings"),
    ({"files": [3]}, "argument_invalid", "files[0]", "a string"),
    ({"files": ["x"], "short_names": "yes"}, "argument_invalid", "short_names", "a boolean"),
    ({}, "argument_missing", "files", "an array of strings"),
    ({"files": ["a\u0000b"]}, "argument_invalid", "files[0]", "a string without NUL"),
    ({"files": ["a" * 200_000]}, "argument_too_long", "files[0]", "at most 65536 bytes"),
]


def test_mistyped_arguments_are_refused_by_the_schema(wire: Wire, subtests: pytest.Subtests) -> None:
    for request_id, (arguments, code, path, expected) in enumerate(MISTYPED, start=1):
        with subtests.test(arguments=str(arguments)[:60]):
            (error,) = _tool_error(wire, request_id, "nsys_kernels", arguments)
            assert (error["code"], error["path"], error["expected"]) == (code, path, expected)
    _ends_cleanly(wire)


def test_an_enum_argument_names_its_choices(wire: Wire) -> None:
    (error,) = _tool_error(wire, 1, "ncu_table", {"path": "x.csv", "name": "nope"})
    assert error["code"] == "argument_invalid" and error["expected"].startswith(
        "one of: kernels, warp_stalls"
    )
    _ends_cleanly(wire)


def test_an_unknown_tool_is_invalid_params_with_the_nearest_names(wire: Wire) -> None:
    wire.call(1, "nsys_kernel", {})
    error = wire.reply(1)["error"]
    assert error["code"] == INVALID_PARAMS and error["data"]["nearest"][0] == "nsys_kernels"
    _ends_cleanly(wire)


def test_a_call_returns_the_same_envelope_as_the_cli(wire: Wire, shared: Path) -> None:
    file = str(shared / "h200" / "nsys" / "eager.sqlite")
    result = wire.tool_result(1, "nsys_kernels", {"files": [file], "limit": 3, "short_names": True})
    cli = gpuopt("nsys", "kernels", file, "--limit", "3", "--short-names", "--json")
    assert result["isError"] is False and cli.code == 0
    envelope, printed = result["structuredContent"], cli.json()
    for provenance in (envelope["provenance"], printed["provenance"]):
        for item in provenance["inputs"]:
            item.pop("from_cache")  # the identity cache may serve one of the two runs
    assert envelope == printed and envelope["data"]["table"]["total_rows"] == 6  # 7 kernels, 6 short names
    assert json.loads(result["content"][0]["text"])["data"] == envelope["data"]
    _ends_cleanly(wire)


def test_an_unreadable_out_is_the_command_s_typed_error(wire: Wire, shared: Path) -> None:
    # Found by a hostile trial: /proc/self/mem (a "regular" file that cannot be read) given as `out` made
    # the search for quoted input fail with OSError: -32603 instead of the command's envelope.
    file = str(shared / "h200" / "nsys" / "eager.sqlite")
    result = wire.tool_result(1, "nsys_kernels", {"files": [file], "limit": 2, "out": "/proc/self/mem"})
    envelope = result["structuredContent"]
    assert result["isError"] is True and envelope["schema"] == "gpuopt.nsys.table/v1"
    (error,) = envelope["errors"]
    assert error["code"] == "output_format_unknown", error  # what the CLI says for the same path
    _ends_cleanly(wire)


SECRET = "SECRETLINE-4711 hunter2"


QUOTED: list[tuple[str, str, str, str]] = [
    ("nsys_kernels", "files", "s.sqlite", f"{SECRET}\nsecond line\n"),
    ("ncu_launches", "path", "s.csv", f"{SECRET}\nsecond line\n"),
    ("sass_functions", "file", "s.sass", f"{SECRET}\nsecond line\n"),
    ("stats_noise", "aa_file", "h.csv", "SECRETCOL,b\n1,2\n"),
    ("stats_compare", "baseline", "v.csv", "value\nSECRETCELL\n"),
]


def test_errors_never_quote_the_input(wire: Wire, tmp_path: Path, subtests: pytest.Subtests) -> None:
    for request_id, (tool, key, name, content) in enumerate(QUOTED, start=1):
        with subtests.test(tool=tool):
            path = tmp_path / name
            path.write_text(content)
            arguments: dict[str, Any] = {key: [str(path)] if key == "files" else str(path)}
            if tool == "stats_compare":
                arguments["candidate"] = str(path)
            result = wire.tool_result(request_id, tool, arguments)
            assert result["isError"] is True
            text = json.dumps(result)
            assert "SECRET" not in text and "hunter2" not in text, text
            # The file is named, its content not: the engines' errors no longer quote it, and the server
            # withholds any text of the file an error might still carry (`<input text withheld>`, tested
            # in test_mcp_framing).
            assert str(path) in text
    _ends_cleanly(wire)
