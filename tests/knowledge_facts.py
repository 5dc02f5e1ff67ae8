"""The fact catalog (``facts.json``) computed from the real fixtures: what the engines emit.

``python tests/knowledge_facts.py`` rewrites the packaged ``facts.json``; ``test_knowledge_registry``
fails when the committed file differs from what the engines emit now.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gpuopt import ncu
from gpuopt.knowledge import facts

ROOT = Path(__file__).resolve().parent.parent
FACTS_JSON = ROOT / "python/gpuopt/knowledge/registry/facts.json"
EVIDENCE = (
    "h200/ncu/kernels_full.raw.csv",
    "h200/sass/kernels_sm90.cuobjdump.sass",
    "h200/sass/kernels_sm90.nvdisasm.sass",
    "h200/sass/ptxas_v_sm90.txt",
    "h200/sass/kernels_sm90.res-usage.txt",
    "h200/nsys/eager.sqlite",
    "h200/graphs/graph_graph.sqlite",
    "h200/graphs/graph_node.sqlite",
    "h200/torch/eager_trace.json",
    "h200/graphs/graph_trace.json",
)


def fixture_catalog(shared: Path) -> dict[str, Any]:
    evidence = [facts.read(shared / name) for name in EVIDENCE]
    info = ncu.open(shared / "h200/ncu/kernels_full.raw.csv").info
    metrics = {f.fact: f.source for f in info.fact_sources if f.source is not None}
    return facts.catalog(evidence, metrics)


def render(catalog: dict[str, Any]) -> str:
    return json.dumps(catalog, indent=1) + "\n"


if __name__ == "__main__":
    from fixture_data import unpacked

    FACTS_JSON.write_text(render(fixture_catalog(unpacked())))
    print(f"wrote {FACTS_JSON}")
