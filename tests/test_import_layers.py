"""The import graph of ``python/gpuopt`` has no cycle and no upward import, per the layer table in
``references/architecture.md`` (module-level, function-local and ``TYPE_CHECKING`` imports alike)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "python" / "gpuopt"
TABLE = ROOT / "references" / "architecture.md"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def modules() -> dict[str, Path]:
    found = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    found.update({_module_name(p): p for p in PACKAGE.rglob("*.pyi") if _module_name(p) not in found})
    return found


def imports(name: str, path: Path, known: set[str]) -> list[tuple[str, int]]:
    """Every gpuopt module ``name`` imports, with the line, wherever the import statement sits."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = name.split(".") if path.stem == "__init__" else name.split(".")[:-1]
    out: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.extend((a.name, node.lineno) for a in node.names if a.name.split(".")[0] == "gpuopt")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            if source.split(".")[0] != "gpuopt":
                continue
            for alias in node.names:
                full = f"{source}.{alias.name}"
                out.append((full if full in known else source, node.lineno))
    return [(target, line) for target, line in out if target != name]


def layers() -> list[tuple[int, str]]:
    """(rank, prefix) rows of the table between the ``layers:begin``/``layers:end`` markers."""
    text = TABLE.read_text()
    block = text.split("<!-- layers:begin -->", 1)[1].split("<!-- layers:end -->", 1)[0]
    rows = []
    for line in block.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0].isdigit():
            rows.extend((int(cells[0]), prefix) for prefix in re.findall(r"`([\w.]+)`", cells[2]))
    return rows


def rank_of(name: str, table: list[tuple[int, str]]) -> int | None:
    best: tuple[int, int] | None = None
    for rank, prefix in table:
        inside = name == prefix or (prefix != "gpuopt" and name.startswith(prefix + "."))
        if inside and (best is None or len(prefix) > best[0]):
            best = (len(prefix), rank)
    return None if best is None else best[1]


def graph() -> dict[str, list[tuple[str, int]]]:
    found = modules()
    known = set(found)
    return {name: imports(name, path, known) for name, path in sorted(found.items())}


def _reachable(succ: dict[str, list[str]], start: str) -> set[str]:
    seen: set[str] = set()
    todo = list(succ[start])
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo.extend(succ[m])
    return seen


def cycles(edges: dict[str, list[tuple[str, int]]]) -> list[list[str]]:
    """The groups of modules that import each other, directly or not (the graph's non-trivial strongly
    connected components)."""
    succ = {m: sorted({t for t, _ in es if t in edges}) for m, es in edges.items()}
    reach = {m: _reachable(succ, m) for m in succ}
    groups = {tuple(sorted(m2 for m2 in reach[m] if m in reach[m2])) for m in succ if m in reach[m]}
    return sorted(list(g) for g in groups)


def test_the_checker_sees_function_local_and_relative_imports(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from gpuopt.evaluation.store import Store\n"
        "def f():\n    from gpuopt.evaluation import jsonio\n    import gpuopt.stats\n"
        "from . import records\n"
    )
    known = {"gpuopt.evaluation.jsonio", "gpuopt.evaluation.records", "gpuopt.stats"}
    found = imports("gpuopt.evaluation.m", source, known)
    assert sorted(found) == [
        ("gpuopt.evaluation.jsonio", 5),
        ("gpuopt.evaluation.records", 7),
        ("gpuopt.evaluation.store", 3),
        ("gpuopt.stats", 6),
    ]


def test_the_checker_finds_a_cycle() -> None:
    edges = {"a": [("b", 1)], "b": [("c", 1)], "c": [("a", 1)], "d": [("a", 1)]}
    assert cycles(edges) == [["a", "b", "c"]]
    assert cycles({"a": [("b", 1)], "b": []}) == []


def test_every_module_has_a_layer() -> None:
    table = layers()
    assert table, "the layer table in references/architecture.md is missing"
    missing = [m for m in graph() if rank_of(m, table) is None]
    assert missing == [], f"place these modules in the layer table of references/architecture.md: {missing}"


def test_the_import_graph_has_no_cycle() -> None:
    assert cycles(graph()) == []


def test_no_module_imports_upward() -> None:
    table = layers()
    upward = []
    for name, targets in graph().items():
        mine = rank_of(name, table)
        for target, line in targets:
            theirs = rank_of(target, table)
            if mine is not None and theirs is not None and theirs > mine:
                upward.append(f"{name}:{line} imports {target} (layer {theirs} > {mine})")
    assert upward == []


RANKS = {
    "gpuopt.evaluation.registry": 0,
    "gpuopt.evaluation.store": 4,
    "gpuopt.evaluation.store.root": 4,
    "gpuopt.evaluation.executor": 6,
    "gpuopt.evaluation.builders": 7,
    "gpuopt.cli.nsys": 9,
}


@pytest.mark.parametrize("name", sorted(RANKS))
def test_known_modules_rank_as_the_table_says(name: str) -> None:
    assert rank_of(name, layers()) == RANKS[name]


# Packages whose ``__init__`` states their public surface: modules outside import only the package.
SURFACES = ("gpuopt.evaluation.store",)


def _behind_a_surface(importer: str, target: str) -> str | None:
    for package in SURFACES:
        inside = importer == package or importer.startswith(package + ".")
        if target.startswith(package + ".") and not inside:
            return package
    return None


def test_outside_a_package_only_its_surface_is_imported() -> None:
    found = [
        f"{name}:{line} imports {target} (import it from {package})"
        for name, targets in graph().items()
        for target, line in targets
        if (package := _behind_a_surface(name, target)) is not None
    ]
    known = set(modules())
    for folder in ("tests", "benchmarks"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for target, line in imports(path.stem, path, known):
                if (package := _behind_a_surface(path.stem, target)) is not None:
                    found.append(f"{folder}/{path.name}:{line} imports {target} (import it from {package})")
    assert found == []


def test_the_surface_rule_sees_a_private_import() -> None:
    assert _behind_a_surface("gpuopt.evaluation.records", "gpuopt.evaluation.store.root") == (
        "gpuopt.evaluation.store"
    )
    assert _behind_a_surface("gpuopt.evaluation.store.reindex", "gpuopt.evaluation.store.root") is None
    assert _behind_a_surface("gpuopt.evaluation.records", "gpuopt.evaluation.store") is None
