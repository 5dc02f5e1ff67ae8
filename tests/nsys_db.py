"""Small, hand-computable nsys SQLite exports for tests, written with Python's sqlite3.

The tables carry the columns gpuopt reads, named and typed as nsys 2025.3 (export schema 3.20.3)
writes them; values are chosen so every expected number can be worked out by hand.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

PID = 100
TID = 101
GLOBAL_PID = (PID << 24) | (1 << 48)
GLOBAL_TID = GLOBAL_PID | TID

SCHEMA = {
    "META_DATA_EXPORT": "name TEXT, value TEXT",
    "StringIds": "id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL",
    "CUPTI_ACTIVITY_KIND_KERNEL": (
        "start INTEGER NOT NULL, end INTEGER, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, "
        "streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, "
        "demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER"
    ),
    "CUPTI_ACTIVITY_KIND_RUNTIME": (
        "start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL, globalTid INTEGER, "
        "correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER"
    ),
    "CUPTI_ACTIVITY_KIND_MEMCPY": (
        "start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, "
        "contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, "
        "bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL, srcKind INTEGER, dstKind INTEGER"
    ),
    "CUPTI_ACTIVITY_KIND_MEMSET": (
        "start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, "
        "contextId INTEGER NOT NULL, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, "
        "value INTEGER NOT NULL, bytes INTEGER NOT NULL, memKind INTEGER"
    ),
    "NVTX_EVENTS": (
        "start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER, category INTEGER, "
        "color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER"
    ),
    "ENUM_CUDA_MEMCPY_OPER": "id INTEGER PRIMARY KEY, name TEXT, label TEXT",
    "ENUM_CUDA_MEM_KIND": "id INTEGER PRIMARY KEY, name TEXT, label TEXT",
}

MEMCPY_OPER = [(1, "CUDA_MEMCPY_KIND_HTOD", "Host-to-Device"), (2, "CUDA_MEMCPY_KIND_DTOH", "Device-to-Host")]
MEM_KIND = [(0, "PAGEABLE", "Pageable"), (1, "PINNED", "Pinned"), (2, "DEVICE", "Device")]


@dataclass
class Export:
    """Rows of a small export; :meth:`write` makes the SQLite file."""

    schema_version: str = "3.20.3"
    strings: dict[int, str] = field(default_factory=dict)
    kernels: list[tuple[int, ...]] = field(default_factory=list)
    runtime: list[tuple[int, ...]] = field(default_factory=list)
    memcpys: list[tuple[int, ...]] = field(default_factory=list)
    memsets: list[tuple[int, ...]] = field(default_factory=list)
    nvtx: list[tuple[object, ...]] = field(default_factory=list)
    drop: set[str] = field(default_factory=set)
    rename: dict[str, str] = field(default_factory=dict)
    #: Replacement column definitions per table (to build damaged exports).
    columns: dict[str, str] = field(default_factory=dict)

    def string(self, text: str) -> int:
        for k, v in self.strings.items():
            if v == text:
                return k
        sid = len(self.strings) + 1
        self.strings[sid] = text
        return sid

    def kernel(
        self, start: int, end: int | None, *, stream: int = 7, device: int = 0, corr: int = 0, name: str = "k"
    ) -> None:
        sid = self.string(name)
        self.kernels.append((start, end, device, 1, stream, corr, GLOBAL_PID, sid, sid, None))

    def call(
        self, start: int, end: int, corr: int, *, name: str = "cudaLaunchKernel_v7000", tid: int = GLOBAL_TID
    ) -> None:
        self.runtime.append((start, end, 0, tid, corr, self.string(name), 0, None))

    def memcpy(
        self, start: int, end: int, nbytes: int, *, kind: int = 1, src: int = 0, dst: int = 2, stream: int = 8
    ) -> None:
        self.memcpys.append((start, end, 0, 1, stream, 0, GLOBAL_PID, nbytes, kind, src, dst))

    def memset(self, start: int, end: int, nbytes: int, *, stream: int = 8) -> None:
        self.memsets.append((start, end, 0, 1, stream, 0, GLOBAL_PID, 0, nbytes, 2))

    def range(
        self, start: int, end: int | None, text: str, *, tid: int = GLOBAL_TID, event_type: int = 59
    ) -> None:
        self.nvtx.append((start, end, event_type, None, None, None, text, tid, None, None, 0))

    def write(self, path: Path) -> Path:
        con = sqlite3.connect(path)
        for table, columns in SCHEMA.items():
            if table in self.drop:
                continue
            columns = self.columns.get(table, columns)
            con.execute(f"CREATE TABLE {self.rename.get(table, table)} ({columns})")

        def put(table: str, rows: list[tuple[object, ...]]) -> None:
            if table in self.drop or not rows:
                return
            name = self.rename.get(table, table)
            width = len(con.execute(f"PRAGMA table_info({name})").fetchall())
            marks = ", ".join("?" * width)
            con.executemany(f"INSERT INTO {name} VALUES ({marks})", [r[:width] for r in rows])

        put(
            "META_DATA_EXPORT",
            [("EXPORT_SCHEMA_VERSION", self.schema_version), ("EXPORT_PRODUCT_VERSION", "test")],
        )
        put("StringIds", list(self.strings.items()))
        put("CUPTI_ACTIVITY_KIND_KERNEL", self.kernels)
        put("CUPTI_ACTIVITY_KIND_RUNTIME", self.runtime)
        put("CUPTI_ACTIVITY_KIND_MEMCPY", self.memcpys)
        put("CUPTI_ACTIVITY_KIND_MEMSET", self.memsets)
        put("NVTX_EVENTS", self.nvtx)
        put("ENUM_CUDA_MEMCPY_OPER", MEMCPY_OPER)
        put("ENUM_CUDA_MEM_KIND", MEM_KIND)
        con.commit()
        con.close()
        return path
