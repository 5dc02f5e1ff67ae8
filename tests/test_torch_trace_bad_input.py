"""Bad PyTorch traces fail with a typed error and exit 2, never a traceback."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from conftest import gpuopt
from gpuopt import torch_trace
from gpuopt.errors import FormatError, InputError, UnsupportedVersionError

KERNEL = {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1.0, "dur": 2.0,
          "args": {"device": 0, "stream": 7, "correlation": 1}}  # fmt: skip


def _doc(events: object, **header: object) -> str:
    return json.dumps({"schemaVersion": 1, **header, "traceEvents": events})


CASES: dict[str, tuple[str, str]] = {
    "wrong traceEvents type": (_doc({"0": KERNEL}), "torch_trace_events_not_array"),
    "no traceEvents": ('{"schemaVersion": 1}', "torch_trace_events_missing"),
    "NaN duration": (_doc([KERNEL]).replace('"dur": 2.0', '"dur": NaN'), "format_invalid"),
    "duplicate event key": (
        _doc([KERNEL]).replace('"dur": 2.0', '"dur": 2.0, "dur": 3.0'),
        "torch_trace_duplicate_key",
    ),
    "duplicate top-level key": (
        '{"schemaVersion": 1, "schemaVersion": 1, "traceEvents": []}',
        "torch_trace_duplicate_key",
    ),
    "empty trace": (_doc([]), "torch_trace_empty"),
    "only metadata": (
        _doc([{"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "p"}}]),
        "torch_trace_empty",
    ),
    "negative duration": (_doc([{**KERNEL, "dur": -0.5}]), "torch_trace_negative_duration"),
    "string timestamp": (_doc([{**KERNEL, "ts": "1.0"}]), "torch_trace_timestamp_invalid"),
    "event not an object": (_doc([1, 2]), "torch_trace_event_invalid"),
    "kernel without ts": (
        _doc([{k: v for k, v in KERNEL.items() if k != "ts"}]),
        "torch_trace_event_invalid",
    ),
    "schemaVersion 2": (
        _doc([KERNEL]).replace('"schemaVersion": 1', '"schemaVersion": 2'),
        "version_unsupported",
    ),
    "no schemaVersion": (json.dumps({"traceEvents": [KERNEL]}), "version_unsupported"),
    "a JSON array": (json.dumps([KERNEL]), "format_invalid"),
    "garbage": ("this is not json", "format_invalid"),
    "trailing garbage": (_doc([KERNEL]) + " }", "format_invalid"),
    "zero bytes": ("", "file_truncated"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_trace_raises_a_typed_error(tmp_path: Path, case: str) -> None:
    text, code = CASES[case]
    path = tmp_path / "t.json"
    path.write_text(text)
    with pytest.raises(InputError) as info:
        torch_trace.open(path)
    assert info.value.code == code
    assert info.value.exit_code == 2


def test_error_classes_follow_the_generic_codes(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(_doc([KERNEL]).replace('"schemaVersion": 1', '"schemaVersion": 7'))
    with pytest.raises(UnsupportedVersionError):
        torch_trace.open(path)
    path.write_text('{"traceEvents": [')
    with pytest.raises(FormatError):
        torch_trace.open(path)


def test_truncated_real_trace_is_file_truncated_exit_2(shared: Path, tmp_path: Path) -> None:
    text = (shared / "h200/torch/eager_trace.json").read_bytes()
    cut = tmp_path / "cut.json"
    cut.write_bytes(text[: len(text) // 2])
    run = gpuopt("torch", "summary", str(cut), "--json")
    assert run.code == 2, run.stderr
    envelope = run.json()
    assert envelope["ok"] is False
    assert envelope["errors"][0]["code"] == "file_truncated"
    assert "Traceback" not in run.stderr


def test_truncated_gzip_is_file_truncated(shared: Path, tmp_path: Path) -> None:
    data = (shared / "public/torch/hta_trace_filter_sampled_rank-1.json.gz").read_bytes()
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(FormatError) as info:
        torch_trace.open(cut)
    assert info.value.code == "file_truncated"


def test_a_small_gzip_that_inflates_to_one_huge_event_is_refused(tmp_path: Path) -> None:
    """A 0.3 MB gzip file inflating to a 300 MB name: the reader held the event whole (a trial's 1.5 GB
    name took 4.7 GB, and 12 GB through `torch kernels`). Past 256 MiB without an event's end it is
    `input_too_large`, exit 2, having held little more than that."""
    import zlib

    squeeze = zlib.compressobj(9, zlib.DEFLATED, 31)
    head, tail = _doc([KERNEL]).encode().split(b'"k"')
    parts = [squeeze.compress(head + b'"')]
    parts += [squeeze.compress(b"A" * (1 << 20)) for _ in range(300)]
    parts += [squeeze.compress(b'"' + tail), squeeze.flush()]
    bomb = tmp_path / "bomb.json.gz"
    bomb.write_bytes(b"".join(parts))
    run = gpuopt("torch", "summary", str(bomb), "--json")
    assert run.code == 2, run.stderr
    error = run.json()["errors"][0]
    assert error["code"] == "input_too_large" and "more than 256 MiB" in error["message"]


def test_bytes_after_the_gzip_stream_are_not_a_truncation(tmp_path: Path) -> None:
    """`gzip -t` calls them trailing garbage; they were reported as a stream that ends early."""
    packed = gzip.compress(_doc([KERNEL]).encode())
    (tmp_path / "tail.json.gz").write_bytes(packed + b"garbage")
    with pytest.raises(FormatError) as info:
        torch_trace.open(tmp_path / "tail.json.gz")
    assert info.value.code == "format_invalid"
    assert "after the end of the compressed stream" in info.value.message
    doc = _doc([KERNEL]).encode()
    (tmp_path / "two.json.gz").write_bytes(gzip.compress(doc[:20]) + gzip.compress(doc[20:]))
    (t,) = torch_trace.open(tmp_path / "two.json.gz").summary().traces  # members in a row: one stream
    assert t.counts.kernels == 1


def test_gzip_is_recognised_by_content_not_name(tmp_path: Path) -> None:
    path = tmp_path / "trace.json"
    path.write_bytes(gzip.compress(_doc([KERNEL]).encode()))
    (t,) = torch_trace.open(path).summary().traces
    assert (t.compressed, t.counts.kernels) == (True, 1)


def test_missing_file_and_empty_folder(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        torch_trace.open(tmp_path / "absent.json")
    assert info.value.code == "file_not_found"
    with pytest.raises(InputError) as info:
        torch_trace.open(tmp_path)
    assert info.value.code == "torch_trace_folder_empty"


@pytest.mark.parametrize(
    ("case", "command"),
    [
        ("negative duration", "kernels"),
        ("wrong traceEvents type", "ops"),
        ("duplicate event key", "timeline"),
    ],
)
def test_cli_bad_input_is_exit_2_with_the_code(tmp_path: Path, case: str, command: str) -> None:
    text, code = CASES[case]
    path = tmp_path / "t.json"
    path.write_text(text)
    run = gpuopt("torch", command, str(path), "--json")
    assert run.code == 2
    assert run.json()["errors"][0]["code"] == code
    human = gpuopt("torch", command, str(path))
    assert human.code == 2
    assert f"error[{code}]" in human.stderr
