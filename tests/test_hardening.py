"""Hardening (issue 13): hostile inputs end in one envelope with a typed error, never a hang or traceback."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from gpuopt import compiler, errors, nsys
from gpuopt import map as gmap

TRITON_MM = "h200/triton/VSJU4SVKNWVE5J7O7AORNNFSDXWNMZL4EN4TFZU25Q33IAWDKZKA"


def _run_all(commands: list[list[str]], cwd: Path, timeout: float = 60) -> list[tuple[int, str, str]]:
    """Runs CLI commands side by side (start-up dominates; one at a time would cost seconds each)."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "gpuopt", *c], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for c in commands
    ]
    out = []
    for p in procs:
        try:
            so, se = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            so, se = p.communicate()
            out.append((-1, "hang", "hang"))
            continue
        out.append((p.returncode, so.decode("utf-8", "replace"), se.decode("utf-8", "replace")))
    return out


# Runs several commands in one child process, in-process through ``main`` (cli_inproc): one Python
# start-up instead of one per command, and still a process the test can time out if a command hangs.
_IN_ONE_PROCESS = """
import json, sys
sys.path.insert(0, sys.argv[1])
from cli_inproc import run_main
runs = [run_main(*args) for args in json.loads(sys.argv[2])]
print(json.dumps([[r.code, r.stdout, r.stderr] for r in runs]))
"""


def test_fifos_answer_not_a_file_instead_of_hanging(tmp_path: Path) -> None:
    # Issue 13.8: 11 commands blocked forever on a FIFO (open() waits for a writer).
    for name in ("f.csv", "f.json", "f.sass", "f.txt", "f.xml", "f.sqlite", "f.py"):
        os.mkfifo(tmp_path / name)
    commands = [
        ["ncu", "summary", "f.csv"],
        ["ncu", "summary", "f.sqlite"],
        ["torch", "summary", "f.json"],
        ["sass", "scan", "f.sass"],
        ["compiler", "ptxas", "f.txt"],
        ["compiler", "res-usage", "f.txt"],
        ["compiler", "inductor", "f.py"],
        ["stats", "compare", "f.csv", "f.csv", "--min-effect", "0.05"],
        ["map", "account", "f.json", "--timeline", "*"],
        ["doctor", "--nvidia-smi-xml", "f.xml"],
        ["nsys", "summary", "f.sqlite"],
    ]
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            _IN_ONE_PROCESS,
            str(Path(__file__).parent),
            json.dumps([[*c, "--json"] for c in commands]),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    for cmd, (code, out, err) in zip(commands, json.loads(done.stdout), strict=True):
        assert code == 2, (cmd, code, out, err)
        assert "Traceback" not in err, (cmd, err)
        assert json.loads(out)["errors"][0]["code"] == "not_a_file", (cmd, out)


def test_non_utf8_file_names_keep_the_envelope(shared: Path, tmp_path: Path) -> None:
    # Issue 13.3: the envelope failed to serialize (sass scan, ncu summary) or the file was "missing".
    sources = {
        "nsys": shared / "h200/nsys/eager.sqlite",
        "torch": shared / "h200/torch/eager_trace.json",
        "sass": shared / "h200/sass/kernels_sm90.cuobjdump.sass",
        "ncu": shared / "h200/ncu/kernels_full.raw.csv",
    }
    commands = []
    for area, src in sources.items():
        name = os.fsdecode(b"x\xff" + src.suffix.encode())
        shutil.copyfile(src, tmp_path / name)
        commands.append([area, "scan" if area == "sass" else "summary", name, "--json"])
    for cmd, (code, out, err) in zip(commands, _run_all(commands, tmp_path), strict=True):
        assert code == 0, (cmd, out, err)
        env = json.loads(out)
        assert env["ok"] is True and len(env["provenance"]["inputs"]) >= 1, cmd


def _events_ipc(tmp_path: Path) -> bytes:
    frame = pl.DataFrame(
        {
            "timeline": ["gpu0/s7"] * 4,
            "category": ["kernel", "kernel", "memcpy", "kernel"],
            "name": ["a", "b", "c", "a"],
            "start_ns": [0, 10, 15, 40],
            "end_ns": [10, 20, 30, 50],
        }
    )
    path = tmp_path / "events.arrow"
    frame.write_ipc(path)
    return path.read_bytes()


def test_truncated_arrow_ipc_is_bad_input_not_a_panic(tmp_path: Path) -> None:
    # Issue 13.3: polars panicked (PanicException, a BaseException) on some truncations.
    data = _events_ipc(tmp_path)
    cut = tmp_path / "cut.arrow"
    for n in range(8, len(data), max(1, len(data) // 64)):
        cut.write_bytes(data[:n])
        try:
            gmap.account(cut, timelines=["*"])
        except errors.InputError:
            continue


def test_window_out_folder_and_deep_nesting_are_bad_input(shared: Path, tmp_path: Path) -> None:
    # Issue 13.4: these were internal errors (exit 1).
    with pytest.raises(errors.InputError, match="64-bit"):
        nsys.parse_window("99999999999999999999999:1")
    deep = tmp_path / "deep.jsonl"
    deep.write_text("[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(errors.InputError, match="nested too deeply"):
        gmap.account(deep, timelines=["*"])
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "gpuopt",
            "nsys",
            "kernels",
            str(shared / "h200/nsys/eager.sqlite"),
            "--out",
            str(tmp_path / "no/such/dir/x.parquet"),
            "--json",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 2, run.stdout + run.stderr
    assert json.loads(run.stdout)["errors"][0]["code"] == "output_folder_missing"


def test_whole_input_reads_are_capped(tmp_path: Path) -> None:
    # Issue 13.4: /dev/zero grew memory without bound; it is not a regular file.
    for call in (
        lambda: compiler.ptxas(Path("/dev/zero")),
        lambda: compiler.res_usage(Path("/dev/zero")),
        lambda: gmap.account("/dev/zero", timelines=["*"]),
    ):
        with pytest.raises(errors.InputError) as caught:
            call()
        assert caught.value.code == "not_a_file"


@pytest.mark.parametrize("content", [b"", b'{"name": "mm", "hash": "ab', b"\x00garbage", b"[" * 50_000])
def test_triton_metadata_that_cannot_be_read_fails_closed(
    shared: Path, tmp_path: Path, content: bytes
) -> None:
    # Issue 13.5: a truncated, empty or garbage metadata JSON dropped its kernel with exit 0.
    folder = tmp_path / "cache"
    shutil.copytree(shared / TRITON_MM, folder)
    (folder / "mm.json").write_bytes(content)
    with pytest.raises(errors.InputError) as caught:
        compiler.triton(folder, sass=False)
    assert caught.value.code == "triton_metadata_invalid"
    assert caught.value.path == str(folder / "mm.json")


@pytest.mark.parametrize(
    "field",
    [
        {"num_warps": "8"},
        {"num_warps": -8},
        {"num_warps": 10**30},
        {"num_stages": 8.5},
        {"shared": True},
        {"name": None},
        {"name": "../../mm"},
        {"target": ["cuda", 90]},
    ],
)
def test_triton_metadata_fields_of_the_wrong_type_fail_closed(
    shared: Path, tmp_path: Path, field: dict[str, object]
) -> None:
    # Found by a hostile trial: a count as text or a float read as absent, a negative or 10^30 one
    # reported as given, a null name as "None" (and a name is joined to the folder to find the stages).
    folder = tmp_path / "cache"
    shutil.copytree(shared / TRITON_MM, folder)
    meta = json.loads((folder / "mm.json").read_text())
    (folder / "mm.json").write_text(json.dumps({**meta, **field}))
    with pytest.raises(errors.InputError) as caught:
        compiler.triton(folder, sass=False)
    assert caught.value.code == "triton_metadata_invalid"
    (key,) = field
    assert f"field {key!r}" in caught.value.message


# A package gpuopt imports, made absent in the child as an install without it would be.
_WITHOUT = """
import sys
sys.modules[sys.argv[1]] = None
from gpuopt._entry import main
main(sys.argv[2:])
"""


def test_a_missing_dependency_is_named_with_exit_3(shared: Path, tmp_path: Path) -> None:
    # Seen on a GPU host before its wheels were complete: pydantic absent ended in a traceback, exit 1,
    # from the error path itself (the envelope needs pydantic).
    trace = str(shared / "h200/torch/eager_trace.json")
    cases = [
        ("pydantic", ["doctor"]),
        ("pydantic", ["doctor", "--json"]),
        ("polars", ["torch", "kernels", trace]),
        ("polars", ["torch", "kernels", trace, "--json"]),
        # click: the CLI cannot even be built (the console script's own guard names it).
        ("click", ["doctor"]),
        ("click", ["torch", "kernels", trace, "--json"]),
    ]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WITHOUT, package, *args],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for package, args in cases
    ]
    for (package, args), proc in zip(cases, procs, strict=True):
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 3, (package, args, out, err)
        assert "Traceback" not in err, (package, args, err)
        if "--json" in args and package not in ("pydantic", "click"):
            (error,) = json.loads(out)["errors"]
            assert error["code"] == "dependency_missing"
            assert f"'{package}'" in error["message"]
            assert error["expected"].startswith(f"pip install {package}")
        else:
            # Without pydantic there is no envelope: the error is on stderr alone.
            assert out == ""
            assert err.startswith(f"error[dependency_missing]: the Python package '{package}'")
            assert f"expected: pip install {package}" in err


def test_stdout_that_cannot_take_the_whole_output_is_an_error_not_exit_0(
    shared: Path, tmp_path: Path
) -> None:
    # Found by a hostile trial: with an unbuffered stdout (PYTHONUNBUFFERED, as agents often run) a short
    # write was dropped: a full disk or a file-size limit cut the envelope and the command exited 0.
    import resource
    import signal

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))

    export = str(shared / "h200/nsys/eager.sqlite")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    for extra in (["--json"], []):
        with open(tmp_path / "out.txt", "wb") as out:
            done = subprocess.run(
                [sys.executable, "-m", "gpuopt", "nsys", "kernels", export, *extra],
                stdout=out,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
                preexec_fn=limit,
                timeout=120,
                check=False,
            )
        assert done.returncode == 2, (extra, done.stderr)
        assert done.stderr.startswith("error[output_unwritable]: standard output:"), done.stderr
        assert "Traceback" not in done.stderr
    # A reader that stops early (`| head`) still ends the output quietly.
    head = subprocess.run(
        f"{sys.executable} -m gpuopt nsys kernels {export} --json | head -c 10",
        shell=True,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert head.stdout == '{\n  "schem' and head.stderr == "", head.stderr
