"""The bundled knowledge registry: schema, sources, facts the engines really emit, package data.

A registry defect fails here (CI), never in a user's query.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from conftest import ROOT, gpuopt
from gpuopt import knowledge
from gpuopt.errors import InputError
from gpuopt.knowledge import facts, schemas
from gpuopt.models.knowledge import CardsFile, SourcesFile
from knowledge_facts import FACTS_JSON, fixture_catalog, render

REGISTRY = ROOT / "python/gpuopt/knowledge/registry"
SASS_CATALOG = json.loads((ROOT / "references/sass_signatures.json").read_text())


def _cards() -> list[dict[str, Any]]:
    return json.loads((REGISTRY / "cards.json").read_text())["cards"]  # type: ignore[no-any-return]


def test_registry_reads_through_importlib_resources_not_a_repository_path() -> None:
    base = resources.files("gpuopt.knowledge") / "registry"
    for name in ("cards.json", "sources.json", "facts.json"):
        assert (base / name).is_file(), name
    registry = knowledge.load_registry()
    assert registry.version == 1
    assert len(registry.cards) == len(CardsFile.model_validate_json((base / "cards.json").read_bytes()).cards)
    assert len(registry.cards) >= 60


def test_committed_schemas_match_the_models() -> None:
    for name in schemas.SCHEMAS:
        committed = (ROOT / "references/knowledge" / name).read_text()
        assert committed == schemas.render(name), (
            "stale: python -m gpuopt.knowledge.schemas references/knowledge"
        )


def test_registry_files_validate_against_their_schemas() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    for data, name in (("cards.json", "cards"), ("sources.json", "sources"), ("facts.json", "facts")):
        schema = json.loads((ROOT / f"references/knowledge/{name}.schema.json").read_text())
        jsonschema.validate(json.loads((REGISTRY / data).read_text()), schema)


def test_every_source_is_primary_https_versioned_and_reviewed() -> None:
    sources = SourcesFile.model_validate_json((REGISTRY / "sources.json").read_bytes()).sources
    hosts = ("docs.nvidia.com", "docs.pytorch.org", "triton-lang.org")
    for s in sources:
        assert re.match(r"^https://([a-z.-]+)/", s.url).group(1) in hosts, s.url  # type: ignore[union-attr]
        assert s.version and s.last_reviewed <= dt.date(2026, 12, 3)
        assert s.publisher in ("NVIDIA", "PyTorch", "Triton", "NCCL")


def test_every_card_cites_sources_with_locators_and_its_own_summary() -> None:
    known = {s["id"] for s in json.loads((REGISTRY / "sources.json").read_text())["sources"]}
    for card in _cards():
        assert card["sources"], card["id"]
        for ref in card["sources"]:
            assert ref["source"] in known and ref["locator"].strip() and len(ref["summary"]) >= 40, card["id"]


def test_coverage_signature_catalog_and_named_phenomena() -> None:
    cards = _cards()
    covered = {key for c in cards for key in c["sass_signatures"]}
    assert covered == {s["key"] for s in SASS_CATALOG["signatures"]}
    ids = {c["id"] for c in cards}
    for needed in (
        "mechanism.cuda_graphs",
        "diagnostic.host_launch_overhead",
        "diagnostic.data_pipeline_starvation",
        "mechanism.communication_overlap",
        "diagnostic.collective_wait_rank_skew",
        "diagnostic.copy_compute_serialization",
        "contract.nsys_time_utilization",
        "mechanism.programmatic_dependent_launch",
        "mechanism.register_spill_local_memory",
        "mechanism.tensor_core_mma",
        "mechanism.coalesced_access",
    ):
        assert needed in ids, needed


def test_every_rule_fact_is_one_the_engines_emit_on_the_real_fixtures(shared: Path) -> None:
    """facts.json is what the engines emit now (not a hand-kept list), and every rule names one of them."""
    catalog = fixture_catalog(shared)
    assert FACTS_JSON.read_text() == render(catalog), "stale facts.json: python tests/knowledge_facts.py"
    emitted = {f"{s['scope']}:{f}" for s in catalog["scopes"] for f in s["facts"]}
    rows = {s["scope"]: set(s["row_names"]) for s in catalog["scopes"]}
    used = 0
    for card in _cards():
        for rule in card["rules"]:
            for c in rule["signals"] + rule["counter"]:
                for name in filter(None, (c["fact"], c.get("per"), c.get("other"))):
                    assert name in emitted, (card["id"], name)
                    used += 1
                if "rows" in c:  # an API name the export really carries (versioned names included)
                    scope = c["fact"].split(":")[0]
                    assert any(re.sub(r"_v\d+$", "", n) == c["rows"] for n in rows[scope]) or c["rows"] in (
                        "cuGraphLaunch",
                        "cudaMemcpy",
                    ), (card["id"], c["rows"])
    assert used >= 40


def test_thresholds_other_than_presence_cite_a_source() -> None:
    for card in _cards():
        for rule in card["rules"]:
            for c in rule["signals"] + rule["counter"]:
                numeric = not (c["value"] == 0 or (c.get("other") and c["value"] == 1))
                if numeric:
                    assert c.get("threshold", {}).get("locator"), (card["id"], c)


def _copy(tmp_path: Path) -> Path:
    out = tmp_path / "reg"
    shutil.copytree(REGISTRY, out)
    return out


def _edit(folder: Path, name: str, change: Any) -> None:
    doc = json.loads((folder / name).read_text())
    change(doc)
    (folder / name).write_text(json.dumps(doc))


@pytest.mark.parametrize(
    ("name", "change", "needle"),
    [
        (
            "cards.json",
            lambda d: d["cards"][0]["rules"][0]["signals"][0].update(fact="ncu.launch:spills"),
            "no engine emits",
        ),
        (
            "cards.json",
            lambda d: d["cards"][0]["rules"][0]["signals"][0].update(fact="sass.function:registers_x"),
            "no engine emits",
        ),
        ("cards.json", lambda d: d["cards"][0]["sources"][0].pop("locator"), "locator"),
        ("sources.json", lambda d: d["sources"][0].pop("last_reviewed"), "last_reviewed"),
        ("sources.json", lambda d: d["sources"][0].update(url="http://example.com"), "url"),
        ("cards.json", lambda d: d["cards"][1]["identity"].update(architectures=["sm_91a"]), "sm_91a"),
        ("cards.json", lambda d: d["cards"][0]["sass_signatures"].append("hmma_magic"), "hmma_magic"),
        ("cards.json", lambda d: d["cards"][0]["sources"][0].update(source="nowhere"), "unknown source"),
        ("cards.json", lambda d: d["cards"].append(d["cards"][0]), "not unique"),
        (
            "cards.json",
            lambda d: d["cards"][14]["rules"][0]["signals"][0].pop("threshold"),
            "states no source",
        ),
    ],
)
def test_registry_defects_are_typed_errors(tmp_path: Path, name: str, change: Any, needle: str) -> None:
    folder = _copy(tmp_path)
    _edit(folder, name, change)
    with pytest.raises(InputError) as err:
        knowledge.load_registry(folder)
    assert err.value.code == "knowledge_registry_invalid" and needle in err.value.message
    run = gpuopt("knowledge", "query", "--registry", str(folder), "--json")
    assert run.code == 2 and run.json()["errors"][0]["code"] == "knowledge_registry_invalid"


def test_sm_90a_and_sm_90_are_different_valid_architectures(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    _edit(folder, "cards.json", lambda d: d["cards"][1]["identity"].update(architectures=["sm_90", "sm_90a"]))
    assert knowledge.load_registry(folder).cards[1].identity.architectures == ["sm_90", "sm_90a"]
    assert facts.SCOPE_SUBJECT["ncu.launch"] == "kernel"
