"""The MCP server's pure parts: line framing with a cap, the id of a broken message, judging a line, and
withholding input text from errors (no server process here; test_mcp_protocol.py runs the real one)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

pytest.importorskip("mcp")

from gpuopt.agent_tools import argv, tools
from gpuopt.cli import cli
from gpuopt.mcp_server import framing
from gpuopt.mcp_server.jsonrpc import Refusal, classify, recover_id
from gpuopt.mcp_server.withhold import PLACEHOLDER, withhold

LINES = st.lists(st.binary().map(lambda b: b.replace(b"\n", b"")), max_size=8)


@given(lines=LINES, cuts=st.lists(st.integers(min_value=0, max_value=200), max_size=10))
def test_lines_come_out_whole_however_the_bytes_are_cut(lines: list[bytes], cuts: list[int]) -> None:
    stream = b"".join(line + b"\n" for line in lines)
    splitter, out, at = framing.Lines(cap_bytes=1 << 20), [], 0
    for cut in sorted(cuts):
        out += splitter.feed(stream[at:cut])
        at = max(at, cut)
    out += splitter.feed(stream[at:]) + splitter.close()
    assert out == lines


@given(size=st.integers(min_value=0, max_value=300), cap=st.integers(min_value=2, max_value=100))
def test_a_line_over_the_cap_is_counted_not_kept(size: int, cap: int) -> None:
    splitter, held = framing.Lines(cap_bytes=cap), 0
    for _ in range(size):
        assert splitter.feed(b"x") == []
        held = max(held, len(splitter._line))  # what the splitter holds: never more than the cap
    out = splitter.feed(b"\nok\n")
    assert held <= cap and out[1:] == [b"ok"]
    if size > cap:
        assert out[0] == framing.Oversized(size, b"x" * min(cap + 1, framing.PREFIX_BYTES))
    else:
        assert out[0] == b"x" * size


def test_a_last_line_without_newline_is_a_line() -> None:
    splitter = framing.Lines()
    assert splitter.feed(b'{"a":1}\n{"b"') == [b'{"a":1}']
    assert splitter.close() == [b'{"b"']
    assert framing.Lines().close() == []


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ('{"jsonrpc":"2.0","id":7,"params":{"x":"aaaa', 7),
        ('  {"id" : "abc", "method": "ping"', "abc"),
        ('{"method":"tools/call","params":{"deep":[1,[2,{"id":3}]]},"id":9}', 9),
        ('{"params":{"x":"cut here', None),
        ('{"id":true}', None),
        ('{"id":null}', None),
        ("[1,2]", None),
        ('{"id":1.5}', None),
        ("", None),
    ],
)
def test_recover_id_reads_the_top_level_up_to_the_break(text: str, found: object) -> None:
    assert recover_id(text) == found


def test_an_oversized_line_keeps_the_id_found_in_its_prefix() -> None:
    refusal = classify(framing.Oversized(20 << 20, b'{"jsonrpc":"2.0","id":"big","params":{"a":"xxx'))
    assert isinstance(refusal, Refusal) and (refusal.id, refusal.code) == ("big", -32600)


def test_a_valid_line_is_the_sdk_message() -> None:
    message = classify(b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}')
    assert not isinstance(message, Refusal) and message is not None
    assert message.model_dump(exclude_unset=True) == {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}


def test_withheld_text_is_what_occurs_in_the_file(tmp_path: Path) -> None:
    file = tmp_path / "in.bin"
    file.write_bytes(b"\x01SECRET\xfftoken\n" + b"x" * 100)
    errors = [
        {
            "code": "format_invalid",
            "message": 'line 1: not a listing: "\\u{1}SECRET\\xfftoken" (wanted "header")',
            "path": str(file),
            "expected": 'a "header" line',
            "observed": "[01, 53, 45]",
        },
        {"code": "other", "message": "3 rows", "observed": "token"},
    ]
    out = withhold(errors, [])
    assert out[0]["message"] == f'line 1: not a listing: {PLACEHOLDER} (wanted "header")'
    assert out[0]["expected"] == 'a "header" line' and out[0]["observed"] == PLACEHOLDER
    assert out[0]["path"] == str(file) and out[1] == {**errors[1], "observed": PLACEHOLDER}
    assert withhold([{"code": "c", "message": 'no "header"'}], [str(file)]) == [
        {"code": "c", "message": 'no "header"'}
    ]


def test_files_are_only_read_when_regular(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    errors = [{"code": "c", "message": 'found "abc"', "path": str(fifo)}]
    assert withhold(errors, [str(tmp_path), "/nonexistent", "a\0b"]) == errors  # no FIFO opened, no hang
    assert json.dumps(errors)


def test_an_integral_number_is_an_integer_word() -> None:
    (kernels,) = [t for t in tools(cli) if t.name == "nsys_kernels"]
    words = argv(kernels, {"files": ["a.sqlite"], "limit": 3.0, "short_names": True})
    assert words == ["nsys", "kernels", "--short-names", "--limit", "3", "--json", "--", "a.sqlite"]
