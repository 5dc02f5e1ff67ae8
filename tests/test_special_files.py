"""Issue 28's special files: a FIFO or ``/dev/zero`` given as an input, a request or an output ends at
once with a typed error (exit 2) instead of waiting for a writer or reading without end.

Every command runs in one child process (``cli_inproc``), which the test times out: a hang fails it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

_IN_ONE_PROCESS = """
import json, sys
sys.path.insert(0, sys.argv[1])
from cli_inproc import run_main
runs = [run_main(*args) for args in json.loads(sys.argv[2])]
print(json.dumps([[r.code, r.stdout, r.stderr] for r in runs]))
"""

VERBS = [
    ["capture"],
    ["baseline"],
    ["noise"],
    ["screen"],
    ["target"],
    ["final-audit"],
    ["experiment"],
    ["readiness", "check"],
    ["champion", "select"],
    ["champion", "restore-original"],
]


def _run(commands: list[list[str]], cwd: Path) -> list[tuple[int, str, str]]:
    done = subprocess.run(
        [sys.executable, "-c", _IN_ONE_PROCESS, str(Path(__file__).parent), json.dumps(commands)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,  # about 40 commands that each answer at once; a hang fails here
        check=True,
    )
    return [tuple(r) for r in json.loads(done.stdout)]  # type: ignore[misc]


def test_fifos_and_devices_as_requests_and_inputs_are_refused_at_once(tmp_path: Path, shared: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    os.mkfifo(tmp_path / "out.json")
    os.mkfifo(tmp_path / "page.html")
    os.mkfifo(tmp_path / "trace.pftrace")
    eager = str(shared / "h200/nsys/eager.sqlite")
    kineto = str(shared / "h200/torch/eager_trace.json")
    inputs = []
    for source in ("pipe", "/dev/zero"):
        inputs += [[*verb, "--request", source] for verb in VERBS]
        inputs += [
            ["profile", "diff", "--baseline", source, "--candidate", eager],
            ["audit", "versions", source, source],
            ["knowledge", "match", source],
        ]
    outputs = [
        ["nsys", "kernels", eager, "--out", "out.json"],
        ["nsys", "report", eager, "--html", "page.html"],
        # The Perfetto exporters wrote beside the name and renamed over it (a FIFO or /dev/zero became
        # a regular file, exit 0).
        ["nsys", "export", "perfetto", eager, "--out", "trace.pftrace"],
        ["torch", "export", "perfetto", kineto, "--out", "trace.pftrace"],
    ]
    runs = _run([[*c, "--json"] for c in inputs + outputs], tmp_path)
    for cmd, (code, out, err) in zip(inputs + outputs, runs, strict=True):
        assert code == 2, (cmd, code, out, err)
        assert "Traceback" not in err, (cmd, err)
        want = "output_not_a_file" if cmd in outputs else "not_a_file"
        assert json.loads(out)["errors"][0]["code"] == want, (cmd, out)
    # Nothing was written through the FIFOs' names: they are still FIFOs.
    assert all((tmp_path / n).is_fifo() for n in ("out.json", "page.html", "trace.pftrace"))


def test_an_output_named_as_a_folder_or_in_a_folder_without_new_files_is_refused(
    tmp_path: Path, shared: Path
) -> None:
    """A trial found `--out x.parquet/` wrote `x.parquet` (pathlib drops the slash), and an output in
    /proc/self said only "No such file or directory" (the temporary file beside it was refused)."""
    eager = str(shared / "h200/nsys/eager.sqlite")
    kineto = str(shared / "h200/torch/eager_trace.json")
    slashed = [
        ["nsys", "kernels", eager, "--out", "x.parquet/"],
        ["nsys", "report", eager, "--html", "page.html/"],
        ["torch", "export", "perfetto", kineto, "--out", "trace.json/"],
    ]
    in_proc = [
        ["nsys", "kernels", eager, "--out", "/proc/self/mem.csv"],
        ["nsys", "export", "perfetto", eager, "--out", "/proc/self/mem"],
    ]
    runs = _run([[*c, "--json"] for c in slashed + in_proc], tmp_path)
    for cmd, (code, out, err) in zip(slashed, runs[: len(slashed)], strict=True):
        assert code == 2 and "names a folder" in out + err, (cmd, code, out, err)
    for cmd, (code, out, err) in zip(in_proc, runs[len(slashed) :], strict=True):
        assert code == 2, (cmd, code, out, err)
        error = json.loads(out)["errors"][0]
        assert error["code"] == "output_unwritable" and "new file in /proc/self" in error["message"], error
    assert list(tmp_path.iterdir()) == []


def test_an_output_never_replaces_a_store_record_or_a_read_only_file(tmp_path: Path, shared: Path) -> None:
    """A trial found `handoff ROOT --out ROOT/target.json` (and --html, --junit, gate export, stats
    --out onto records) replaced the store's create-once, read-only records, exit 0: the rename goes
    round the mode the store relies on."""
    root = tmp_path / "root"
    (root / "ledger").mkdir(parents=True)
    (root / "ledger" / "records.jsonl").write_bytes(b"")
    target = root / "target.json"
    target.write_bytes(b'{"id": "t"}\n')
    target.chmod(0o444)
    record = root / "gates" / "baselines" / "gb-1.json"
    record.parent.mkdir(parents=True)
    record.write_bytes(b"{}\n")  # writable, but a record all the same
    listed = root / "objects" / "blobs" / "ab" / "listed.csv"  # any file in a root's folders
    listed.parent.mkdir(parents=True)
    listed.write_bytes(b"y\n")
    lone = tmp_path / "kept.csv"
    lone.write_bytes(b"x\n")
    lone.chmod(0o444)
    eager = str(shared / "h200/nsys/eager.sqlite")
    kineto = str(shared / "h200/torch/eager_trace.json")
    commands = [
        ["nsys", "kernels", eager, "--out", str(target)],
        ["nsys", "kernels", eager, "--out", str(lone)],
        ["nsys", "kernels", eager, "--out", str(listed)],
        ["torch", "export", "perfetto", kineto, "--out", str(record)],
        ["nsys", "report", eager, "--html", str(target)],
    ]
    before = {p: p.read_bytes() for p in (target, record, lone, listed)}
    runs = _run([[*c, "--json"] for c in commands], tmp_path)
    for cmd, (code, out, err) in zip(commands, runs, strict=True):
        assert code == 2, (cmd, code, out, err)
        assert json.loads(out)["errors"][0]["code"] == "output_is_a_record", (cmd, out)
    assert {p: p.read_bytes() for p in before} == before
    # A new file in a root, and a writable one at its top level, are still written.
    fresh = _run([["nsys", "kernels", eager, "--out", str(root / "kernels.csv"), "--json"]] * 2, tmp_path)
    assert [r[0] for r in fresh] == [0, 0]
