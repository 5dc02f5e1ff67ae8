"""The CLI as agent tools: one tool per leaf click command, its JSON input schema and its argv.

Walks the same click tree that ``--help`` and ``references/cli.md`` come from, so the MCP tools, the
skill check and the CLI cannot disagree. Pure: no MCP import here (``gpuopt.mcp_server`` is the glue).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import click

# Commands that are about the agent surface itself, not facts: never served as tools.
_NOT_TOOLS = frozenset({("mcp",), ("skill",)})


@dataclass(frozen=True)
class Tool:
    """A leaf command seen as a tool: ``name`` (``nsys_kernels``), its CLI path and its click command."""

    name: str
    path: tuple[str, ...]
    command: click.Command

    @property
    def description(self) -> str:
        """The command's help, and for a command that prints one table, its columns (with units) from
        their declarations (``gpuopt.fields``), so an agent can pick ``--sort`` and ``--columns``."""
        text = (self.command.help or self.command.short_help or "").strip()
        from gpuopt import fields

        keys = fields.resolve(".".join(self.path)) if len(self.path) == 2 else []
        if len(keys) != 1:
            return text
        return f"{text}\n\nColumns (gpuopt schema {keys[0]} defines each): {fields.columns_line(keys[0])}."


def walk(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], click.Command]]:
    """Every command under ``group`` (groups and leaves), depth first, with its CLI path."""
    ctx = click.Context(group)
    out: list[tuple[tuple[str, ...], click.Command]] = []
    for name in sorted(group.list_commands(ctx)):
        sub = group.get_command(ctx, name)
        if sub is None or sub.hidden:
            continue
        path = (*prefix, name)
        out.append((path, sub))
        if isinstance(sub, click.Group):
            out += walk(sub, path)
    return out


def tools(root: click.Group) -> list[Tool]:
    """Leaf commands that print a JSON envelope (they take ``--json``), named ``area_verb``."""
    found = []
    for path, cmd in walk(root):
        if isinstance(cmd, click.Group) or path[:1] in _NOT_TOOLS:
            continue
        if not any(p.name == "as_json" for p in cmd.params):
            continue
        found.append(Tool("_".join(path).replace("-", "_"), path, cmd))
    return found


def _is_bool_flag(param: click.Parameter) -> bool:
    return isinstance(param, click.Option) and bool(param.is_flag) and bool(param.is_bool_flag)


def _type_schema(param: click.Parameter) -> dict[str, Any]:
    t = param.type
    if _is_bool_flag(param):
        return {"type": "boolean"}
    if isinstance(t, click.Choice):
        return {"type": "string", "enum": [str(c) for c in t.choices]}
    if isinstance(t, click.IntRange):
        schema: dict[str, Any] = {"type": "integer"}
        if t.min is not None:
            schema["minimum"] = t.min
        if t.max is not None:
            schema["maximum"] = t.max
        return schema
    if t is click.INT:
        return {"type": "integer"}
    if isinstance(t, click.FloatRange) or t is click.FLOAT:
        return {"type": "number"}
    if t is click.BOOL:
        return {"type": "boolean"}
    return {"type": "string"}


def _params(cmd: click.Command) -> list[click.Parameter]:
    return [p for p in cmd.params if p.name not in (None, "as_json", "help") and p.expose_value]


def param_name(param: click.Parameter) -> str:
    """The name a tool call gives a parameter: the CLI's own words, so an agent reading ``--help`` and a
    person typing the command use one name (``--request`` is ``request``, ``--timeout-s`` is
    ``timeout_s``, an argument keeps its name), whatever the Python function calls it."""
    assert param.name is not None
    if isinstance(param, click.Option):
        long = [o for o in param.opts if o.startswith("--")]
        if long:
            return long[0][2:].replace("-", "_")
    return param.name


def input_schema(cmd: click.Command) -> dict[str, Any]:
    """The JSON Schema of a command's inputs: one property per click argument or option, named as the CLI
    names it (:func:`param_name`)."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    for p in _params(cmd):
        name = param_name(p)
        schema = _type_schema(p)
        if p.multiple or p.nargs == -1:
            schema = {"type": "array", "items": schema}
        if isinstance(p, click.Option):
            if p.help:
                schema["description"] = " ".join(p.help.split())
            if p.default is not None and not callable(p.default) and not p.is_flag:
                default = p.default if isinstance(p.default, (int, float, str, bool)) else None
                if default is not None:
                    schema["default"] = default
        elif isinstance(p, click.Argument) and p.help:
            schema["description"] = " ".join(p.help.split())
        properties[name] = schema
        if p.required:
            required.append(name)
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def _word(param: click.Parameter, value: Any) -> str:
    """One value as a CLI word; JSON Schema counts 3.0 as an integer, click does not."""
    if isinstance(value, float) and value.is_integer() and _type_schema(param)["type"] == "integer":
        return str(int(value))
    return str(value)


def argv(tool: Tool, arguments: dict[str, Any]) -> list[str]:
    """The CLI words that run ``tool`` with ``arguments`` (validated against its schema) and ``--json``."""
    options: list[str] = []
    positionals: list[str] = []
    for p in _params(tool.command):
        value = arguments.get(param_name(p))
        if value is None:
            continue
        values = value if isinstance(value, list) else [value]
        if isinstance(p, click.Argument):
            positionals += [_word(p, v) for v in values]
        elif _is_bool_flag(p):
            if value:
                options.append(p.opts[0])
            elif p.secondary_opts:
                options.append(p.secondary_opts[0])
        else:
            for v in values:
                options += [p.opts[0], _word(p, v)]
    words = [*tool.path, *options, "--json"]
    return [*words, "--", *positionals] if positionals else words
