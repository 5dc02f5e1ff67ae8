"""Column declarations: each table column's name, dtype, unit and one-line meaning, written once.

Tables the engines build in Rust are declared there, next to the code that computes them
(``rust/src/<area>/fields.rs``, read here through ``_native.table_fields_json()``); the few columns
Python computes are declared with :class:`Column` next to where Python builds them (``profile.KEY_COLUMNS``,
``many.KEY_COLUMNS``, ``nsys.PER_DEVICE``). ``gpuopt.fields`` gathers both.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from typing import Literal

Unit = Literal[
    "ns",
    "bytes",
    "bytes_per_s",
    "gbps",
    "pct",
    "hz",
    "cycles",
    "flop",
    "flop_per_s",
    "tflop_per_s",
    "flop_per_byte",
    "count",
    "ratio",
    "id",
    "input",
    "per_row",
    "none",
]
"""What a column's numbers measure (``rust/src/column.rs::Unit``): people's tables scale by it."""


@dataclass(frozen=True)
class Column:
    """One column: ``dtype`` as polars prints it (``Int64``, ``Float64``, ``String``, ``Boolean``,
    ``UInt64``, ``List(String)``, ``List(Struct)``), its unit and what it means."""

    name: str
    dtype: str
    unit: Unit
    meaning: str


@cache
def native() -> dict[str, tuple[Column, ...]]:
    """``AREA.TABLE`` -> the columns of every table the Rust engines build, in order."""
    from gpuopt import _native

    return {
        t["key"]: tuple(Column(**c) for c in t["columns"]) for t in json.loads(_native.table_fields_json())
    }
