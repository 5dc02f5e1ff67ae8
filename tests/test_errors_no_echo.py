"""Hardening (issue 28): an error names the file, the position and the expected shape, never the file's
content. A file given by mistake (a credentials file, a ``.env``, a key) must not reach a terminal, a CI log
or an agent over MCP: for every reader, a file whose first line is a fake secret fails with a typed error
whose stdout, stderr and ``--json`` envelope hold none of its lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_inproc import run_main
from nsys_db import Export

SECRET = "ghp_FAKEc0ffee5ecre7"
SECOND = "hunter2-second-line"

# The same secret first line, then what would make each reader read on (a header, a JSON value, cells).
CONTENTS = {
    "line": f"{SECRET}\n{SECOND}\n",
    "json_string": f'"{SECRET}"\n',
    "json_value": f'{{"format": "{SECRET}", "schemaVersion": "{SECOND}"}}\n',
    "env_file": f"GITHUB_TOKEN={SECRET}\nDB_PASS={SECOND}\n",
    "value_column": f"value\n{SECRET}\n{SECOND}\n",
    "csv_header": f'"ID","{SECRET}"\n"{SECOND}","1"\n',
    "ncu_cells": f'"ID","Kernel Name"\n"",""\n"{SECRET}","k"\n',
    "binary": f"{SECRET}\x00\x01\x02\x03{SECOND}",
    "kineto": f'{{"schemaVersion": 1, "traceEvents": [{{"ph": "X", "ts": "{SECRET}", "dur": 1}}]}}\n',
    # serde_json's own messages quote the value they met ("invalid type: string \"...\"").
    "kineto_args": f'{{"traceEvents": [{{"ph": "X", "ts": 1, "dur": 1, "args": "{SECRET} {SECOND}"}}]}}\n',
    # A SASS listing cut inside a function named with the secret (the error named the function).
    "sass_cut": f'\t\tFunction : {SECRET}\n\t.headerflags @"EF_CUDA_SM90"\n{SECOND}\n',
    "kineto_phase": f'{{"traceEvents": [{{"ph": 7, "name": ["{SECRET}"], "{SECOND}": {{}}}}]}}\n',
}

COMMANDS = [
    ["nsys", "summary", "{f}.sqlite"],
    ["nsys", "kernels", "{f}.sqlite"],
    ["nsys", "kernels", "{f}.sqlite", "{f}.nsys-rep"],
    ["nsys", "timeline", "{f}.sqlite"],
    ["torch", "summary", "{f}.json"],
    ["torch", "kernels", "{f}.json"],
    ["torch", "kernels", "{f}.json", "{f}.txt"],
    ["ncu", "summary", "{f}.csv"],
    ["ncu", "summary", "{f}.ncu-rep"],
    ["ncu", "launches", "{f}.txt"],
    ["ncu", "compare", "{f}.csv", "{f}.csv"],
    ["sass", "scan", "{f}.sass"],
    ["sass", "functions", "{f}.txt"],
    ["sass", "opcodes", "{f}.sass"],
    ["compiler", "ptxas", "{f}.txt"],
    ["compiler", "res-usage", "{f}.txt"],
    ["compiler", "inductor", "{f}.py"],
    ["compiler", "triton", "{f}.json"],
    ["stats", "compare", "{f}.jsonl", "{f}.jsonl", "--min-effect", "0.05"],
    ["stats", "compare", "{f}.csv", "{f}.csv", "--min-effect", "0.05"],
    ["stats", "noise", "{f}.csv"],
    ["doctor", "--nvidia-smi-xml", "{f}.xml"],
    ["knowledge", "match", "{f}.txt"],
    ["profile", "diff", "{f}.bin", "{f}.bin"],
    ["map", "account", "{f}.jsonl", "--timeline", "*"],
    ["readiness", "check", "--request", "{f}.json"],
    ["readiness", "check", "--request", "{f}.json", "--dry-run"],
    ["baseline", "--request", "{f}.json"],
    ["noise", "--request", "{f}.json"],
    ["screen", "--request", "{f}.json"],
    ["target", "--request", "{f}.json"],
    ["experiment", "--request", "{f}.json"],
    ["final-audit", "--request", "{f}.json"],
    ["capture", "--request", "{f}.json"],
    ["champion", "select", "--request", "{f}.json"],
]

SUFFIXES = ("sqlite", "nsys-rep", "json", "txt", "csv", "ncu-rep", "sass", "py", "jsonl", "xml", "bin")


@pytest.mark.parametrize("content", sorted(CONTENTS))
def test_no_reader_echoes_the_file(tmp_path: Path, content: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for suffix in SUFFIXES:
        (tmp_path / f"f.{suffix}").write_bytes(CONTENTS[content].encode("utf-8"))
    leaks = []
    for command in COMMANDS:
        args = [a.format(f="f") for a in command]
        for extra in ([], ["--json"]):
            run = run_main(*args, *extra)
            said = run.stdout + run.stderr
            assert run.code != 1, (args, extra, said[-2000:])  # a typed error, or a file read without it
            for secret in (SECRET, SECOND):
                if secret in said:
                    line = next(x for x in said.splitlines() if secret in x)
                    leaks.append(f"{' '.join(args + extra)}: {line}")
    assert not leaks, "\n".join(leaks)


def test_an_export_schema_version_that_is_not_one_is_not_repeated(tmp_path: Path) -> None:
    path = Export(schema_version=f"{SECRET} {SECOND}").write(tmp_path / "v.sqlite")
    run = run_main("nsys", "kernels", str(path), "--json")
    assert run.code == 2
    assert SECRET not in run.stdout + run.stderr and SECOND not in run.stdout + run.stderr
    assert "not digits and dots" in run.stdout
