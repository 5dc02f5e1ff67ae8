"""A clone runs its tests alone: every fixture lives in ``tests/data`` and unpacks to its original bytes."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

from fixture_data import PACKED, SUFFIX, unpacked

ROOT = Path(__file__).resolve().parent.parent


def test_every_packed_fixture_unpacks_to_its_original_bytes() -> None:
    out = unpacked()
    packed = [p for p in PACKED.rglob("*") if p.is_file()]
    assert len(packed) >= 190
    for src in packed:
        rel = src.relative_to(PACKED).as_posix()
        if rel.endswith(SUFFIX):
            rel = rel[: -len(SUFFIX)]
            assert (out / rel).read_bytes() == gzip.decompress(src.read_bytes()), rel
        else:
            assert (out / rel).read_bytes() == src.read_bytes(), rel


def test_known_fixture_facts_hold_on_the_copies() -> None:
    out = unpacked()
    assert (out / "h200/nsys/eager.sqlite").read_bytes()[:16] == b"SQLite format 3\x00"
    assert (out / "h200/graphs/graph_graph.sqlite").stat().st_size == 380928


def test_no_test_reads_the_shared_folder_beside_the_repository() -> None:
    pattern = re.compile(r"""["'/]\.\./shared|"shared"\s*/\s*"fixtures"|join\("\.\./shared""")
    sources = [*ROOT.joinpath("tests").glob("*.py"), *ROOT.joinpath("rust", "src").rglob("*.rs")]
    offenders = [str(p.relative_to(ROOT)) for p in sources if pattern.search(p.read_text())]
    assert offenders == []
