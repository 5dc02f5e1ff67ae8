"""Values, samples, cases and flags turned into the little-endian byte buffers the engine reads."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from gpuopt.errors import InputError

if TYPE_CHECKING:
    import numpy as np


def _value_error(name: str, detail: str) -> InputError:
    return InputError(
        "value_invalid",
        f"{name}: {detail}",
        path=name,
        expected="numbers, or one sequence of numbers (samples) per call",
    )


def _numbers(name: str, data: Any) -> np.ndarray:
    import numpy as np

    if isinstance(data, (str, bytes, bool)):
        raise _value_error(name, f"{type(data).__name__} is not a number")
    try:
        array = np.asarray(data)
    except (TypeError, ValueError) as exc:
        raise _value_error(name, str(exc)) from exc
    if array.dtype == np.bool_ or array.dtype.kind not in "iuf":
        raise _value_error(name, f"values of dtype {array.dtype} are not numbers")
    return array.astype("<f8", copy=False).ravel()


def calls(name: str, data: Any) -> tuple[bytes, bytes | None, int]:
    """Values (float64) and, when calls carry several samples, call offsets (uint64)."""
    import numpy as np

    if hasattr(data, "to_numpy") and not isinstance(data, np.ndarray):
        data = data.to_numpy()
    if isinstance(data, np.ndarray) and data.ndim == 1 and data.dtype != object:
        values = _numbers(name, data)
        return values.tobytes(), None, len(values)
    items = list(data)
    if all(np.ndim(item) == 0 for item in items):
        values = _numbers(name, items) if items else np.zeros(0, dtype="<f8")
        return values.tobytes(), None, len(values)
    parts = [_numbers(f"{name}[{i}]", item) for i, item in enumerate(items)]
    lengths = np.array([len(p) for p in parts], dtype="<u8")
    if (lengths == 0).any():
        raise _value_error(name, f"call {int(np.argmin(lengths))} has no samples")
    offsets = np.concatenate([np.zeros(1, dtype="<u8"), np.cumsum(lengths, dtype="<u8")])
    return np.concatenate(parts).astype("<f8").tobytes(), offsets.tobytes(), len(parts)


def cases(cases: Sequence[str], n: int) -> tuple[bytes, list[str]]:
    import numpy as np

    labels = [str(c) for c in cases]
    if len(labels) != n:
        raise InputError(
            "pair_count_mismatch",
            f"cases has {len(labels)} entries for {n} pairs",
            path="cases",
            expected=f"{n} entries",
            observed=f"{len(labels)} entries",
        )
    names: list[str] = []
    index: dict[str, int] = {}
    codes = np.empty(n, dtype="<u4")
    for i, label in enumerate(labels):
        if label not in index:
            index[label] = len(names)
            names.append(label)
        codes[i] = index[label]
    return codes.tobytes(), names


def flags(name: str, values: Iterable[Any], mapping: dict[Any, int]) -> bytes:
    out = bytearray()
    for i, v in enumerate(values):
        if v not in mapping:
            raise InputError(
                "value_invalid",
                f"{name}[{i}] is {v!r}",
                path=f"{name}[{i}]",
                expected=" or ".join(repr(k) for k in mapping),
            )
        out.append(mapping[v])
    return bytes(out)
