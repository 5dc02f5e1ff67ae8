"""JSON Schemas of the registry files, generated from the pydantic models.

``python -m gpuopt.knowledge.schemas references/knowledge`` writes them; a test checks the committed
copies equal what the models generate.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from gpuopt.models.knowledge import CardsFile, FactCatalog, SourcesFile

SCHEMAS: dict[str, Any] = {
    "cards.schema.json": CardsFile,
    "sources.schema.json": SourcesFile,
    "facts.schema.json": FactCatalog,
}


def render(name: str) -> str:
    schema = SCHEMAS[name].model_json_schema(mode="validation")
    return json.dumps(schema, indent=1, sort_keys=True) + "\n"


def main(argv: list[str]) -> None:
    out = Path(argv[0]) if argv else Path("references/knowledge")
    out.mkdir(parents=True, exist_ok=True)
    for name in SCHEMAS:
        (out / name).write_text(render(name), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1:])
