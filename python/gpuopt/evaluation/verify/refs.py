"""The trees a record references: every field typed :data:`~gpuopt.models.evaluation.common.ObjectDigest`,
found by walking the validated record along its model's annotations (the models are the one list)."""

from __future__ import annotations

import types
from functools import cache
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel

from gpuopt.models.evaluation.common import OBJECT_REFERENCE


def object_references(record: BaseModel) -> list[tuple[str, str]]:
    """``(json path, digest)`` of every object reference in ``record``, in field order."""
    out: list[tuple[str, str]] = []
    _walk(record, None, "", out)
    return out


def _walk(value: Any, annotation: Any, path: str, out: list[tuple[str, str]]) -> None:
    if isinstance(value, BaseModel):
        for name, marked, field_annotation in _fields(type(value)):
            child = getattr(value, name)
            child_path = f"{path}.{name}" if path else name
            if marked and isinstance(child, str):
                out.append((child_path, child))
            else:
                _walk(child, field_annotation, child_path, out)
    elif isinstance(value, str):
        if _marked(annotation):
            out.append((path, value))
    elif isinstance(value, list | tuple):
        item = _item(annotation, (list, tuple), 0)
        for index, child in enumerate(value):
            _walk(child, item, f"{path}[{index}]", out)
    elif isinstance(value, dict):
        item = _item(annotation, (dict,), 1)
        for key, child in value.items():
            _walk(child, item, f"{path}.{key}", out)


@cache
def _fields(model: type[BaseModel]) -> tuple[tuple[str, bool, Any], ...]:
    """The fields of ``model`` that can hold a reference: ``(name, marked itself, annotation)``."""
    found = []
    for name, info in model.model_fields.items():
        marked = any(m is OBJECT_REFERENCE for m in info.metadata)
        if marked or _reaches(info.annotation, set()):
            found.append((name, marked, info.annotation))
    return tuple(found)


def _reaches(annotation: Any, seen: set[type]) -> bool:
    """Whether a value of this annotation can hold a marked string (directly or inside a model)."""
    if _marked(annotation):
        return True
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        if annotation in seen:
            return False
        seen.add(annotation)
        return any(
            any(m is OBJECT_REFERENCE for m in info.metadata) or _reaches(info.annotation, seen)
            for info in annotation.model_fields.values()
        )
    return any(_reaches(arg, seen) for arg in get_args(annotation) if not isinstance(arg, str))


def _marked(annotation: Any) -> bool:
    origin = get_origin(annotation)
    if origin is Annotated:
        return any(m is OBJECT_REFERENCE for m in annotation.__metadata__) or _marked(get_args(annotation)[0])
    if origin is Union or origin is types.UnionType:
        return any(_marked(arm) for arm in get_args(annotation))
    return False


def _item(annotation: Any, origins: tuple[type, ...], index: int) -> Any:
    """The item (``index`` 0) or value (``index`` 1 of a dict) annotation of a container annotation."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _item(get_args(annotation)[0], origins, index)
    if origin is Union or origin is types.UnionType:
        for arm in get_args(annotation):
            found = _item(arm, origins, index)
            if found is not None:
                return found
        return None
    if origin in origins:
        args = get_args(annotation)
        return args[index] if len(args) > index else None
    return None
