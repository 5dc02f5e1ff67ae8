"""Copies the agent trial's files into DIR under plain names, with TASKS.md (see README.md)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent

FILES = {
    "decode_eager.sqlite": "h200/nsys/eager.sqlite",
    "decode_graph.sqlite": "h200/graphs/graph_graph.sqlite",
    "decode_eager_torch.json": "h200/torch/eager_trace.json",
    "kernels.ncu-rep": "h200/ncu/kernels_full.ncu-rep",
}
ORACLES = {"kernels.raw.csv": "h200/ncu/kernels_full.raw.csv"}


def unpacked() -> Path:
    sys.path.insert(0, str(ROOT / "tests"))
    from fixture_data import unpacked as unpack

    return Path(unpack())


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: prepare.py DIR")
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    src = unpacked()
    for name, rel in FILES.items():
        shutil.copyfile(src / rel, out / name)
    oracle = out.parent / f"{out.name}.oracle"
    oracle.mkdir(exist_ok=True)
    for name, rel in ORACLES.items():
        shutil.copyfile(src / rel, oracle / name)
    shutil.copyfile(HERE / "TASKS.md", out / "TASKS.md")
    print(f"prepared {out} (the checker's oracle files: {oracle})")


if __name__ == "__main__":
    main()
