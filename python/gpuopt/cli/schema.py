"""``gpuopt schema``."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from gpuopt.cli._output import Outcome, command
from gpuopt.errors import InputError

if TYPE_CHECKING:
    pass


@click.command()
@click.argument("name", required=False)
@command("gpuopt.schema/v1")
def schema(name: str | None) -> Outcome:
    """Print the JSON Schema of a document gpuopt emits, or list their names.

    The schemas are generated from gpuopt's pydantic models, the single source of truth.

    \b
    Examples:
      gpuopt schema                       # list names
      gpuopt schema gpuopt.doctor/v1      # the schema itself
    """
    from gpuopt.models.schema import SchemaDocument, SchemaShown
    from gpuopt.schemas import DOCUMENTS, ENVELOPES, document_schema, json_schema

    names = sorted(ENVELOPES)
    documents = sorted(DOCUMENTS)
    if name is None:
        return Outcome(
            data=SchemaDocument(names=names, shown=None, documents=documents),
            render=lambda: "\n".join([*names, *documents]),
        )
    if name in DOCUMENTS:
        doc = SchemaShown(name=name, json_schema=document_schema(name))
        return Outcome(
            data=SchemaDocument(names=names, shown=doc, documents=documents),
            render=lambda: json.dumps(doc.json_schema, indent=2),
        )
    if name not in ENVELOPES:
        raise InputError(
            "schema_unknown",
            f"no schema named {name!r}",
            expected=", ".join(sorted([*ENVELOPES, *DOCUMENTS])),
            observed=name,
        )
    shown = SchemaShown(name=name, json_schema=json_schema(name))
    return Outcome(
        data=SchemaDocument(names=names, shown=shown), render=lambda: json.dumps(shown.json_schema, indent=2)
    )
