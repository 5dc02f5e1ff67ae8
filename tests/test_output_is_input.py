"""An output that names a command's own input is refused before anything is read or written.

A fourth hostile trial found `torch kernels t.json --out t.json` replaced the trace with its table
(exit 0), and `nsys report e.sqlite --html e.sqlite`, `nsys export perfetto e.sqlite --out e.sqlite`,
`torch report t.json --html t.json` replaced their input before failing: outputs are renamed over their
path, so the input was gone whatever came after."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from cli_inproc import run_main
from gpuopt import perfetto
from gpuopt.errors import InputError


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def inputs(shared: Path, tmp_path: Path) -> tuple[Path, Path]:
    trace = tmp_path / "t.json"
    export = tmp_path / "e.sqlite"
    shutil.copy(shared / "h200" / "torch" / "eager_trace.json", trace)
    shutil.copy(shared / "h200" / "nsys" / "eager.sqlite", export)
    return trace, export


def _refused(*args: str) -> dict[str, object]:
    run = run_main(*args, "--json")
    assert run.code == 2, run.stdout + run.stderr
    error: dict[str, object] = run.json()["errors"][0]
    assert error["code"] == "output_is_input", error
    return error


def test_an_output_naming_the_input_leaves_the_input_whole(inputs: tuple[Path, Path]) -> None:
    trace, export = inputs
    before = _digest(trace), _digest(export)
    t, e = str(trace), str(export)
    _refused("torch", "kernels", t, "--out", t)
    _refused("torch", "export", "perfetto", t, "--out", t)
    _refused("torch", "report", t, "--html", t)
    _refused("nsys", "report", e, "--html", e)
    _refused("nsys", "export", "perfetto", e, "--out", e)
    _refused("nsys", "kernels", e, "--out", e)  # before its format is looked at
    assert (_digest(trace), _digest(export)) == before


def test_another_name_for_the_input_is_the_input(inputs: tuple[Path, Path]) -> None:
    """A link, a hard link, another spelling of the path, a glob among several files."""
    trace, _ = inputs
    before = _digest(trace)
    folder = trace.parent
    (folder / "link.json").symlink_to(trace.name)
    os.link(trace, folder / "hard.json")
    shutil.copy(trace, folder / "u.json")
    error = _refused("torch", "kernels", str(folder / "link.json"), "--out", str(trace))
    assert "the same file as the input" in str(error["message"])
    _refused("torch", "kernels", str(trace), "--out", str(folder / "hard.json"))
    _refused("torch", "kernels", str(trace), "--out", str(folder / "." / "t.json"))
    _refused("torch", "kernels", str(folder / "t*.json"), str(folder / "u.json"), "--out", str(trace))
    assert _digest(trace) == before
    # A new output, or another file, is written as before.
    assert run_main("torch", "kernels", str(trace), "--out", str(folder / "k.parquet")).code == 0
    assert run_main("torch", "kernels", str(trace), "--out", str(folder / "u.json"), "--json").code == 0


def test_the_library_refuses_it_too(inputs: tuple[Path, Path]) -> None:
    trace, export = inputs
    before = _digest(trace), _digest(export)
    for call in (lambda: perfetto.export_torch(trace, trace), lambda: perfetto.export_nsys(export, export)):
        with pytest.raises(InputError) as err:
            call()
        assert err.value.code == "output_is_input"
    assert (_digest(trace), _digest(export)) == before
