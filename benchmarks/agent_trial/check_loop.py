"""Checks an agent's answers_loop.json and its artifact root against truth read here from plain files (see
README_LOOP.md): the candidates' roles from the prepared oracle (the bundled example's own roles), and the
root's ledger and record files read as JSON (no gpuopt code), so a wrong answer cannot agree with a wrong
gpuopt."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROLE_OF_KEY = {"faster_and_correct": "faster", "wrong": "wrong", "no_effect": "no_effect"}
"""Each answer list and the example's role it names (``gpuopt.example.runner.CANDIDATES``)."""
CHECKS = (
    "ledger: every candidate evaluated (screen or target)",
    "ledger: Champion selected",
    "ledger: final audit passed for the Champion",
)


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def ledger(root: Path) -> list[dict[str, Any]]:
    path = root / "ledger" / "records.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def folders_by_tree(root: Path, sha_by_folder: dict[str, str]) -> dict[str, str]:
    """Tree digest -> candidate folder, for every stored tree whose layernorm.py is a candidate's file."""
    folder_by_sha = {sha: name for name, sha in sha_by_folder.items()}
    out: dict[str, str] = {}
    for tree in (root / "objects" / "trees").glob("*.json"):
        try:
            entries = load(tree).get("entries", [])
        except (OSError, ValueError):
            continue
        for e in entries:
            if e.get("path") == "layernorm.py" and e.get("sha256") in folder_by_sha:
                out[tree.stem] = folder_by_sha[e["sha256"]]
    return out


def check_root(root: Path, truth_champion: str, sha_by_folder: dict[str, str]) -> list[tuple[str, bool, str]]:
    records = ledger(root)
    if not records:
        why = f"no ledger at {root / 'ledger' / 'records.jsonl'}"
        return [(name, False, why) for name in CHECKS]
    folder = folders_by_tree(root, sha_by_folder)
    invocations = {r["id"]: r["keys"] for r in records if r["kind"] == "invocation"}
    results = [r for r in records if r["kind"] == "result"]

    # Evidence: every candidate has a completed screen or target result in the ledger.
    seen: dict[str, list[str]] = {name: [] for name in sha_by_folder}
    for r in results:
        k, inv = r["keys"], invocations.get(r["id"], {})
        if k.get("operation") in ("screen", "target"):
            name = folder.get(inv.get("candidate_digest", ""))
            if name is not None:
                detail = f"{k['operation']} {k.get('verdict')} ({k.get('stop_reason')}"
                detail += f", primary {k['primary_verdict']})" if k.get("primary_verdict") else ")"
                seen[name].append(detail)
    missing = [n for n, v in seen.items() if not v]
    checks = [
        (
            CHECKS[0],
            not missing,
            "; ".join(f"{n}: {', '.join(v) or 'none'}" for n, v in sorted(seen.items())),
        )
    ]

    # The Champion: champion/current.json -> its Selection file -> the variant's tree -> a folder.
    pointers = [r for r in records if r["kind"] == "pointer"]
    current = root / "champion" / "current.json"
    champion_digest = champion_name = selection_id = None
    if current.is_file() and pointers:
        selection_id = (load(current).get("selection") or {}).get("id")
        agrees = pointers[-1]["keys"].get("selection") == selection_id
        sel_path = root / "champion" / "selections" / f"{selection_id}.json"
        if selection_id and agrees and sel_path.is_file():
            sel = load(sel_path)
            if sel.get("decision") == "select_candidate":
                champion_digest = (sel.get("variant") or {}).get("digest")
                champion_name = folder.get(champion_digest or "")
    checks.append(
        (
            CHECKS[1],
            champion_name == truth_champion,
            f"selection {selection_id} -> candidate {champion_name!r} (truth {truth_champion!r})",
        )
    )

    # A passed final audit of that Champion (ledger keys, then the result file itself).
    audits = []
    for r in results:
        if r["keys"].get("operation") != "final_audit":
            continue
        inv = invocations.get(r["id"], {})
        res_path = root / r["path"]
        res = load(res_path) if res_path.is_file() else {}
        audited = ((res.get("champion") or {}).get("selection") or {}).get("id")
        ok = (
            r["keys"].get("verdict") == "passed"
            and res.get("verdict") == "passed"
            and champion_digest is not None
            and inv.get("candidate_digest") == champion_digest
            and audited == selection_id
        )
        audits.append((r["id"], res.get("verdict"), ok))
    checks.append(
        (
            CHECKS[2],
            any(ok for *_, ok in audits),
            ", ".join(f"{i} {v}" for i, v, _ in audits) or "no final_audit result",
        )
    )
    return checks


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: check_loop.py DIR")
    d = Path(sys.argv[1]).resolve()
    oracle = load(d.parent / f"{d.name}.oracle" / "roles.json")
    roles: dict[str, str] = oracle["roles"]
    want: dict[str, Any] = {
        key: sorted(name for name, r in roles.items() if r == role) for key, role in ROLE_OF_KEY.items()
    }
    want["champion"] = want["faster_and_correct"][0]
    path = d / "answers_loop.json"
    answers = load(path) if path.is_file() else {}
    right = total = 0
    for key, expected in want.items():
        got = answers.get(key)
        ok = (
            (sorted(got) == expected)
            if isinstance(expected, list) and isinstance(got, list)
            else got == expected
        )
        right, total = right + ok, total + 1
        print(f"{key}: {'right' if ok else 'WRONG'}  answered {got!r}  truth {expected!r}")
    for name, ok, detail in check_root(d / "root", want["champion"], oracle["layernorm_sha256"]):
        right, total = right + ok, total + 1
        print(f"{name}: {'right' if ok else 'WRONG'}  {detail}")
    log = d / "commands.log"
    commands = [line for line in log.read_text().splitlines() if line.strip()] if log.exists() else []
    helps = sum("--help" in c or c.strip().endswith(" -h") for c in commands)
    print(f"{right}/{total} right; {len(commands)} commands ({helps} of them --help)")


if __name__ == "__main__":
    main()
