"""The library answers, the CLI renders (issue 29): ``python/gpuopt/cli`` holds no query logic.

Cheap checks of the source (no command runs):

* no module of ``python/gpuopt`` imports ``sqlite3``: exports are read by one SQLite reader, the engine's
  (tests and benchmarks may keep it as an oracle);
* in ``gpuopt.cli`` only the people-rendering modules (:data:`PEOPLE`) import polars at run time (an
  annotation under ``TYPE_CHECKING`` is fine) or call a DataFrame method that filters, joins, groups,
  sorts, derives or reshapes (:data:`QUERY_METHODS`): those are the library's, which returns the document
  the command prints.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "python" / "gpuopt"
CLI = PACKAGE / "cli"

#: What people see of a table: ``_people`` draws it, ``_views`` chooses the columns and rows on screen.
PEOPLE = frozenset({"_people.py", "_views.py"})

#: DataFrame (and Series, expression) methods that compute facts rather than show them.
QUERY_METHODS = frozenset(
    {
        "agg",
        "cast",
        "drop",
        "explode",
        "fill_null",
        "filter",
        "group_by",
        "head",
        "hstack",
        "is_in",
        "iter_rows",
        "join",
        "map_elements",
        "melt",
        "over",
        "pivot",
        "rename",
        "select",
        "sort",
        "tail",
        "to_dicts",
        "unique",
        "unpivot",
        "value_counts",
        "vstack",
        "with_columns",
        "with_row_index",
    }
)


def _modules(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.py"))


def _type_checking_lines(tree: ast.Module) -> set[int]:
    """Lines inside ``if TYPE_CHECKING:`` blocks (imports there are for annotations only)."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def _imports(tree: ast.Module) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.lineno, node.module))
    return out


def _imported_names(tree: ast.Module) -> set[str]:
    """Names bound by imports: ``lib.select(...)`` calls a library function, not a DataFrame method."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def _query_calls(tree: ast.Module) -> list[tuple[int, str]]:
    """``x.METHOD(...)`` calls of :data:`QUERY_METHODS`; ``"sep".join(...)`` is str's, not polars', and
    ``module.select(...)`` a library function's."""
    modules = _imported_names(tree)
    out = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        name, receiver = node.func.attr, node.func.value
        if name not in QUERY_METHODS:
            continue
        if name == "join" and isinstance(receiver, ast.Constant) and isinstance(receiver.value, str):
            continue
        if isinstance(receiver, ast.Name) and receiver.id in modules:
            continue
        out.append((node.lineno, name))
    return out


def test_no_module_of_the_package_imports_sqlite3() -> None:
    found = [
        f"{path.relative_to(PACKAGE)}:{line}"
        for path in _modules(PACKAGE)
        for line, module in _imports(ast.parse(path.read_text()))
        if module.split(".")[0] == "sqlite3"
    ]
    assert found == [], "the engine's reader is the one SQLite reader: " + ", ".join(found)


@pytest.mark.parametrize("path", [p for p in _modules(CLI) if p.name not in PEOPLE], ids=lambda p: p.name)
def test_cli_modules_neither_import_polars_nor_query_frames(path: Path) -> None:
    tree = ast.parse(path.read_text())
    annotations = _type_checking_lines(tree)
    polars = [
        f"line {line}: import {module}"
        for line, module in _imports(tree)
        if module.split(".")[0] == "polars" and line not in annotations
    ]
    queries = [f"line {line}: .{name}(...)" for line, name in _query_calls(tree)]
    assert polars + queries == [], (
        f"{path.name} computes facts: move it into the library (a *_document function) or, if it only "
        "chooses what people see, into gpuopt/cli/_views.py"
    )


def test_the_checks_see_what_they_forbid() -> None:
    """The checker finds a query and an import it should find (so an empty result means something)."""
    tree = ast.parse(
        "import polars as pl\nframe.filter(pl.col('x') > 0).sort('y')\n', '.join(names)\nsep.join(xs)\n"
        "from gpuopt import champion as lib\nlib.select(request)\n"
    )
    assert _imports(tree) == [(1, "polars"), (5, "gpuopt")]
    assert sorted(_query_calls(tree)) == [(2, "filter"), (2, "sort"), (4, "join")]
