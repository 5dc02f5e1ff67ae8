"""ARCHITECTURE.md's recipes stay true: every path, symbol and test they name exists.

A recipe that names ``path/to/file.py:symbol`` needs the file and a definition of the symbol in it; one that
names ``tests/test_x.py::test_y`` needs that test function; a bare path needs the file or folder.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEXT = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
NAMED = re.findall(r"`([A-Za-z0-9_./-]+(?:::?[A-Za-z_][A-Za-z0-9_]*)?)`", TEXT)


def _paths() -> list[str]:
    return [n for n in NAMED if "/" in n and not n.startswith("rust/src/<")]


def _defines(path: Path, symbol: str) -> bool:
    text = path.read_text(encoding="utf-8")
    pattern = rf"^\s*(?:def|class|fn|pub fn|pub\(crate\) fn)\s+{symbol}\b|^{symbol}\s*[:=]|^\s*{symbol}\s*="
    return re.search(pattern, text, re.MULTILINE) is not None


def test_the_recipes_name_something() -> None:
    assert len(_paths()) >= 25
    assert sum("::" in n for n in NAMED) >= 5


def test_every_named_path_symbol_and_test_exists() -> None:
    missing = []
    for name in _paths():
        file, sep, symbol = name.partition("::") if "::" in name else name.partition(":")
        path = ROOT / file.rstrip("/")
        if not path.exists():
            missing.append(f"{name}: no {file}")
        elif sep and not _defines(path, symbol):
            missing.append(f"{name}: {file} defines no {symbol}")
    assert missing == [], "ARCHITECTURE.md names what is not there"


def test_the_checker_sees_a_stale_name(tmp_path: Path) -> None:
    f = tmp_path / "m.py"
    f.write_text("def here():\n    pass\nVERBS = ()\n")
    assert _defines(f, "here") and _defines(f, "VERBS") and not _defines(f, "gone")
