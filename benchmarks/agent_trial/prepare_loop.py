"""Copies the loop trial's workload into DIR with TASKS_LOOP.md (see README_LOOP.md).

The workload is gpuopt's bundled numpy example (``gpuopt example run`` starts from the same files): the
original layer normalization, its driver, its test set and three candidates. The candidates get neutral
folder names (``candidates/A``, ``B``, ``C``, shuffled by ``--seed``) and a neutral module docstring, since
the example's own names and docstrings ("faster", "wrong", ...) are the answers. The example's fourth
candidate (``slower``, kept for the regression gate's recipes) is left out.

The checker's oracle (which folder is which role, and each candidate file's sha256) goes to DIR.oracle/,
beside DIR, not inside it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROLES = ("faster", "wrong", "no_effect")
"""The example's three candidates the loop evaluates (``gpuopt.example.runner.CANDIDATES``)."""
NAMES = ("A", "B", "C")
NEUTRAL_DOC = '"""A candidate implementation of run(x): same interface as original/layernorm.py."""'


def example_project() -> Path:
    import gpuopt.example

    project = Path(gpuopt.example.__file__).resolve().parent / "project" / "numpy"
    if not (project / "original" / "layernorm.py").is_file():
        raise SystemExit(f"the bundled example is not where expected: {project}")
    return project


def neutral(source: str) -> str:
    """The candidate's source with its module docstring (which names its role) replaced."""
    out, n = re.subn(r'\A"""(.|\n)*?"""', NEUTRAL_DOC, source, count=1)
    if n != 1:
        raise SystemExit("a candidate has no leading module docstring; check the example's layout")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", type=Path)
    ap.add_argument("--seed", type=int, default=7, help="shuffles which folder holds which candidate")
    args = ap.parse_args()
    out: Path = args.dir.resolve()
    if out.exists() and any(out.iterdir()):
        raise SystemExit(f"{out} exists and is not empty")
    src = example_project()
    project = out / "project"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for part in ("original", "bench", "testset"):
        shutil.copytree(src / part, project / part, ignore=ignore)
    order = list(ROLES)
    random.Random(args.seed).shuffle(order)
    roles: dict[str, str] = {}
    digests: dict[str, str] = {}
    for name, role in zip(NAMES, order, strict=True):
        folder = project / "candidates" / name
        folder.mkdir(parents=True)
        text = neutral((src / "candidates" / role / "layernorm.py").read_text(encoding="utf-8"))
        (folder / "layernorm.py").write_text(text, encoding="utf-8")
        roles[name] = role
        digests[name] = hashlib.sha256(text.encode()).hexdigest()
    shutil.copyfile(HERE / "TASKS_LOOP.md", out / "TASKS_LOOP.md")
    oracle = out.parent / f"{out.name}.oracle"
    oracle.mkdir(exist_ok=True)
    (oracle / "roles.json").write_text(
        json.dumps({"roles": roles, "layernorm_sha256": digests, "seed": args.seed}, indent=2) + "\n",
        encoding="utf-8",
    )
    print(f"prepared {out} (the checker's oracle: {oracle})")


if __name__ == "__main__":
    main()
