"""A seeded corpus of mutated real files over every reading CLI command (issue 13, "Also").

Each case copies a real fixture, damages it (bit flips, garbage bytes, deleted or repeated ranges,
truncation) and runs one command on it with ``--json``, in this process through the same ``main`` as
the console entry (``cli_inproc``). Every case must give exactly one JSON envelope on stdout, an exit
code in {0, 2, 3}, and no traceback. A case answering 0 must give the same ``data`` as the unmutated
file or flag what it could not read (``unmodeled`` grows) -- checked for damage a reader can see: a
file cut off mid-line or mid-structure, or binary garbage inside a text report. A flipped digit is a
different file, not damage, so only the envelope contract is asked of it.

``GPUOPT_CORPUS_CASES`` sets the number of cases (default 60, seeded, a few tens of seconds);
``GPUOPT_CORPUS_SEED`` the seed.
"""

from __future__ import annotations

import json
import os
import random
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cli_inproc import run_main

CASES = int(os.environ.get("GPUOPT_CORPUS_CASES", "60"))
SEED = int(os.environ.get("GPUOPT_CORPUS_SEED", "13"))


@dataclass(frozen=True)
class Source:
    """A real input and the commands that read it (``{}`` is the file's path)."""

    fixture: str
    commands: tuple[tuple[str, ...], ...]
    text: bool = True


NSYS = Source(
    "h200/nsys/eager.sqlite",
    (
        *(
            ("nsys", c, "{}")
            for c in ("api", "gaps", "kernels", "mem", "nvtx", "summary", "timeline", "graphs")
        ),
        ("nsys", "stats", "{}", "--report", "cuda_gpu_kern_sum"),
    ),
    text=False,
)
TORCH = Source(
    "h200/torch/eager_trace.json",
    tuple(
        ("torch", c, "{}") for c in ("summary", "kernels", "ops", "launches", "gaps", "steps", "transfers")
    ),
)
SOURCES = (
    NSYS,
    TORCH,
    Source(
        "h200/ncu/kernels_full.raw.csv",
        (
            ("ncu", "summary", "{}"),
            ("ncu", "launches", "{}"),
            ("ncu", "roofline", "{}"),
            ("ncu", "table", "{}", "metrics"),
        ),
    ),
    Source(
        "h200/sass/kernels_sm90.cuobjdump.sass",
        (("sass", "scan", "{}"), ("sass", "functions", "{}"), ("sass", "opcodes", "{}")),
    ),
    Source("h200/sass/ptxas_v_sm90.txt", (("compiler", "ptxas", "{}"),)),
    Source("h200/sass/kernels_sm90.res-usage.txt", (("compiler", "res-usage", "{}"),)),
    Source("h200/env/nvidia-smi-q.xml", (("doctor", "--nvidia-smi-xml", "{}"),)),
    Source(
        "samples.csv",
        (
            ("stats", "compare", "{}", "{}"),
            ("stats", "noise", "{}", "--first-column", "value", "--second-column", "other"),
        ),
    ),
    Source("events.jsonl", (("map", "account", "{}", "--timeline", "*"),)),
)

Mutation = tuple[str, Callable[[bytes], bytes]]


def _samples() -> bytes:
    rows = [f"k{i},{1.0 + 0.01 * (i % 7):.4f},{1.02 + 0.011 * (i % 5):.4f}" for i in range(24)]
    return ("key,value,other\n" + "\n".join(rows) + "\n").encode()


def _events() -> bytes:
    lines = []
    for i in range(30):
        start = 1000 * i
        kind = ("kernel", "memcpy")[i % 2]
        event = {"timeline": "gpu0/s7", "category": kind, "name": f"k{i % 4}", "start_ns": start}
        lines.append(json.dumps({**event, "end_ns": start + 600}))
    return ("\n".join(lines) + "\n").encode()


def _original(shared: Path, source: Source) -> bytes:
    made = {"samples.csv": _samples, "events.jsonl": _events}
    if source.fixture in made:
        return made[source.fixture]()
    return (shared / source.fixture).read_bytes()


def _mutations(rng: random.Random, text: bool) -> list[Mutation]:
    """The damage kinds, each drawing its positions from ``rng``."""

    def cut_mid_line(data: bytes) -> bytes:
        at = rng.randrange(1, len(data))
        while at > 1 and data[at - 1 : at] == b"\n":
            at -= 1
        return data[:at]

    def garbage(data: bytes) -> bytes:
        at = rng.randrange(len(data))
        return data[:at] + bytes([0, 0xFF, 1, 0x80]) + data[at:]

    def flip(data: bytes) -> bytes:
        at = rng.randrange(len(data))
        return data[:at] + bytes([data[at] ^ (1 << rng.randrange(8))]) + data[at + 1 :]

    def delete(data: bytes) -> bytes:
        at = rng.randrange(len(data))
        return data[:at] + data[at + rng.randrange(1, 200) :]

    def repeat(data: bytes) -> bytes:
        at = rng.randrange(len(data))
        return data[:at] + data[at : at + rng.randrange(1, 200)] + data[at:]

    return [
        ("cut", cut_mid_line if text else (lambda d: d[: rng.randrange(1, len(d))])),
        ("garbage", garbage),
        ("flip", flip),
        ("delete", delete),
        ("repeat", repeat),
    ]


def _visible(kind: str, text: bool) -> bool:
    """Whether a reader can tell this damage from a legitimately different file.

    A cut is always visible (every format has an end: SQLite's page count, JSON's brackets, a listing's
    last line and newline). Binary garbage is visible inside a text report only; in SQLite it lands in a
    record as a different value. Flips, deletions and repeats can make another valid file.
    """
    return kind == "cut" or (kind == "garbage" and text)


def _cases() -> list[tuple[int, Source, tuple[str, ...], str]]:
    rng = random.Random(SEED)
    commands = [(s, c) for s in SOURCES for c in s.commands]
    kinds = [name for name, _ in _mutations(rng, True)]
    out = []
    for i in range(CASES):
        source, command = commands[i % len(commands)] if i < len(commands) else rng.choice(commands)
        out.append((i, source, command, kinds[rng.randrange(len(kinds))]))
    return out


_BASELINES: dict[tuple[str, ...], Any] = {}


def _run(command: tuple[str, ...], path: Path) -> tuple[int, Any, str]:
    run = run_main(*[str(path) if a == "{}" else a for a in command], "--json")
    assert "Traceback" not in run.stderr, run.stderr
    assert run.code in (0, 2, 3), (run.code, run.stdout[-2000:])
    envelope = json.loads(run.stdout)  # exactly one JSON document
    assert isinstance(envelope, dict) and envelope["ok"] is (run.code == 0), envelope
    return run.code, envelope, run.stderr


def _comparable(envelope: dict[str, Any], path: Path) -> str:
    """The answer without what names the file (its path and digest differ between copies)."""
    text = json.dumps(envelope["data"], sort_keys=True)
    return text.replace(str(path), "{}").replace(path.name, "{name}")


def _id(case: tuple[int, Source, tuple[str, ...], str]) -> str:
    index, _, command, kind = case
    return f"{index}-{'-'.join(a for a in command if a != '{}')}-{kind}"


@pytest.mark.parametrize(("index", "source", "command", "kind"), _cases(), ids=[_id(c) for c in _cases()])
def test_mutated_input_keeps_the_contract(
    shared: Path, tmp_path: Path, index: int, source: Source, command: tuple[str, ...], kind: str
) -> None:
    original = _original(shared, source)
    suffix = Path(source.fixture).suffix
    clean = tmp_path / f"clean{suffix}"
    clean.write_bytes(original)
    if command not in _BASELINES:
        code, envelope, _ = _run(command, clean)
        assert code == 0, envelope
        flags = {json.dumps(u, sort_keys=True) for u in envelope["unmodeled"]}
        _BASELINES[command] = (_comparable(envelope, clean), flags)
    rng = random.Random(f"{SEED}/{index}")
    mutate = dict(_mutations(rng, source.text))[kind]
    damaged = tmp_path / f"input{suffix}"
    damaged.write_bytes(mutate(original))
    if source is NSYS or source is TORCH:
        shutil.copystat(clean, damaged)
    code, envelope, _ = _run(command, damaged)
    if code != 0 or not _visible(kind, source.text):
        return
    answer, flags = _BASELINES[command]
    new_flags = {json.dumps(u, sort_keys=True) for u in envelope["unmodeled"]} - flags
    assert _comparable(envelope, damaged) == answer or new_flags, (kind, command)
