"""Child-process workers for the crash and race tests (run as ``python -m eval_support.writers ...``).

They call the same native primitives the store uses, importing nothing heavier, so many start quickly.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time

from gpuopt import _native
from gpuopt.errors import InputError


def record_bytes(value: object) -> bytes:
    return _native.canonical_json(json.dumps(value).encode()) + b"\n"


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def record_for(i: int) -> dict[str, object]:
    """The deterministic content of record ``i`` (sizes vary so writes take different times)."""
    return {"id": f"exp-{i:064x}", "index": i, "payload": "x" * (97 * (i % 41) + 11)}


def write_records(root: str, count: int) -> int:
    """Publishes records 0..count-1 (skipping existing ones) with a ledger line each, as the store does."""
    for i in range(count):
        rel = f"experiments/exp-{i:064x}.json"
        if _native.store_exists(root, rel):
            continue
        pub = json.loads(_native.store_write_once(root, rel, record_bytes(record_for(i))))
        entry = {
            "at_epoch": pub["mtime_ns"] / 1e9,
            "kind": "experiment",
            "id": f"exp-{i:064x}",
            "path": rel,
            "sha256": pub["sha256"],
            "keys": {},  # what store.ledger_keys derives from this record (verify checks it)
        }
        _native.ledger_append(root, "ledger/records.jsonl", record_bytes(entry)[:-1])
        print(i, flush=True)  # progress, so the test can kill at a chosen point
    return 0


def cas_updates(root: str, writer: int, updates: int) -> int:
    """Performs ``updates`` successful compare-and-swaps, retrying on stale_reference; prints the retries."""
    done = retries = 0
    while done < updates:
        try:
            current = _native.store_read(root, "champion/current.json", 1 << 20)
            sha = sha256_hex(current)
            count = int(json.loads(current)["count"])
        except InputError as exc:
            if exc.code != "file_not_found":
                raise
            sha, count = None, 0
        body = record_bytes({"count": count + 1, "prev": sha, "writer": writer})
        try:
            _native.store_cas(
                root,
                "champion/current.json",
                "locks/champion.lock",
                sha,
                body,
                [(f"champion/selections/{count + 1}.json", body)],
            )
            done += 1
        except InputError as exc:
            if exc.code != "stale_reference":
                raise
            retries += 1
    print(retries)
    return 0


def cas_once(root: str, writer: int, start_file: str) -> int:
    """Waits for the start file, then one CAS expecting "absent"; prints won or the error code."""
    while not os.path.exists(start_file):
        time.sleep(0.001)
    body = record_bytes({"count": 1, "prev": None, "writer": writer})
    try:
        _native.store_cas(
            root,
            "champion/current.json",
            "locks/champion.lock",
            None,
            body,
            [(f"champion/selections/w{writer}.json", body)],
        )
        print("won")
    except InputError as exc:
        print(exc.code)
    return 0


if __name__ == "__main__":
    cmd, *args = sys.argv[1:]
    if cmd == "records":
        sys.exit(write_records(args[0], int(args[1])))
    if cmd == "cas":
        sys.exit(cas_updates(args[0], int(args[1]), int(args[2])))
    if cmd == "cas-once":
        sys.exit(cas_once(args[0], int(args[1]), args[2]))
    sys.exit(2)
