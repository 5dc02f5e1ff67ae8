"""``gpuopt schema``."""

from __future__ import annotations

import json

import click

from gpuopt.cli._output import Outcome, command
from gpuopt.errors import InputError


@click.command()
@click.argument(
    "name",
    required=False,
    help="A schema name (gpuopt.doctor/v1) or a table (AREA.TABLE, AREA.COMMAND, or a data.table.name); "
    "without it, every name.",
)
@command("gpuopt.schema/v1")
def schema(name: str | None) -> Outcome:
    """Print the JSON Schema of a document gpuopt emits, or list their names.

    The schemas are generated from gpuopt's pydantic models, the single source of truth; every field
    carries a one-line description. A table name (AREA.TABLE, e.g. torch.ops; AREA.COMMAND, e.g.
    torch.timeline for the table `gpuopt torch timeline` prints; or the name a command's JSON gives in
    data.table.name, e.g. ncu_launches) prints the definition of each of its columns.

    \b
    Examples:
      gpuopt schema                       # list names
      gpuopt schema gpuopt.doctor/v1      # the schema itself
      gpuopt schema nsys.nvtx_ranges      # what each column of `gpuopt nsys nvtx` means
    """
    from gpuopt import fields
    from gpuopt.models.schema import SchemaDocument, SchemaShown
    from gpuopt.schemas import DOCUMENTS, ENVELOPES, document_schema, json_schema

    names = sorted(ENVELOPES)
    documents = sorted(DOCUMENTS)
    tables = sorted(fields.TABLES)
    if name is None:
        return Outcome(
            data=SchemaDocument(names=names, shown=None, documents=documents, tables=tables),
            render=lambda: "\n".join([*names, *documents, *tables]),
        )
    keys = [] if name in ENVELOPES or name in DOCUMENTS else fields.resolve(name)
    if len(keys) > 1:
        raise InputError(
            "schema_ambiguous",
            f"{name!r} names several tables: say which, as AREA.TABLE",
            expected=", ".join(keys),
            observed=name,
        )
    if keys:
        key = keys[0]
        table = SchemaShown(name=key, json_schema=fields.row_schema(key))
        return Outcome(
            data=SchemaDocument(names=names, shown=table, documents=documents, tables=tables),
            render=lambda: fields.render(key),
        )
    if name in DOCUMENTS:
        doc = SchemaShown(name=name, json_schema=document_schema(name))
        return Outcome(
            data=SchemaDocument(names=names, shown=doc, documents=documents, tables=tables),
            render=lambda: json.dumps(doc.json_schema, indent=2),
        )
    if name not in ENVELOPES:
        # A name is echoed only while short: a 100,000-character one made a 205 KB envelope.
        echoed = name if len(name) <= 200 else f"a name of {len(name)} characters"
        raise InputError(
            "schema_unknown",
            f"no schema named {name!r}" if len(name) <= 200 else f"no schema named so ({echoed})",
            expected=", ".join(sorted([*ENVELOPES, *DOCUMENTS, *tables])),
            observed=echoed,
        )
    shown = SchemaShown(name=name, json_schema=json_schema(name))
    return Outcome(
        data=SchemaDocument(names=names, shown=shown, tables=tables),
        render=lambda: json.dumps(shown.json_schema, indent=2),
    )
