"""Canonical JSON (RFC 8785) and the strict reader, through the Python surface."""

from __future__ import annotations

import json
import random
import struct

import pytest
from pydantic import BaseModel

from gpuopt import _native
from gpuopt.errors import InputError
from gpuopt.evaluation import jsonio
from gpuopt.evaluation.driver_template import canonical as template_canonical
from gpuopt.models.evaluation.common import Record
from gpuopt.models.evaluation.target import MetricDeclaration, Objective


def test_rfc8785_example_document() -> None:
    raw = (
        b'{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],'
        b' "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",'
        b' "literals": [null, true, false]}'
    )
    assert (
        _native.canonical_json(raw)
        == (
            '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],'
            '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}'
        ).encode()
    )


@pytest.mark.parametrize(
    ("bits", "text"),
    [
        (0x0000000000000001, "5e-324"),
        (0x7FEFFFFFFFFFFFFF, "1.7976931348623157e+308"),
        (0x44B52D02C7E14AF6, "1e+23"),
        (0x444B1AE4D6E2EF50, "1e+21"),
        (0x444B1AE4D6E2EF4F, "999999999999999900000"),
        (0x3EB0C6F7A0B5ED8D, "0.000001"),
        (0x3EB0C6F7A0B5ED8C, "9.999999999999997e-7"),
        (0x41B3DE4355555557, "333333333.33333343"),
        (0xBECBF647612F3696, "-0.0000033333333333333333"),
        (0x43143FF3C1CB0959, "1424953923781206.2"),
    ],
)
def test_rfc8785_number_vectors(bits: int, text: str) -> None:
    value = struct.unpack(">d", bits.to_bytes(8, "big"))[0]
    assert jsonio.canonical(value).decode() == text


def test_key_order_is_utf16_code_units() -> None:
    doc = {"\u20ac": 1, "\r": 2, "\ufb33": 3, "1": 4, "\U0001f600": 5, "\u0080": 6, "\u00f6": 7}
    keys = list(json.loads(jsonio.canonical(doc)))
    assert keys == ["\r", "1", "\u0080", "\u00f6", "\u20ac", "\U0001f600", "\ufb33"]


def test_ids_agree_for_any_key_order_and_with_an_independent_implementation() -> None:
    rng = random.Random(8785)
    doc = {"b": [1, 2.5, {"z": None, "a": True}], "a": "é", "c": {"y": -0.0, "x": 1e-7}}
    expected = jsonio.digest(doc)
    for _ in range(20):
        items = list(doc.items())
        rng.shuffle(items)
        assert jsonio.digest(dict(items)) == expected
    # The driver template carries its own pure-Python RFC 8785 writer; both must agree byte for byte.
    for _ in range(3000):
        value = struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0]
        if value != value or value in (float("inf"), float("-inf")):
            continue
        assert template_canonical(value) == jsonio.canonical(value).decode(), repr(value)
    nested = {"k": [rng.uniform(-1e9, 1e9) for _ in range(50)], "s": '\u2028\x01"\\'}
    assert template_canonical(nested) == jsonio.canonical(nested).decode()


@pytest.mark.parametrize(
    ("raw", "path"),
    [
        (b'{"a": {"b": 1, "b": 2}}', "a.b"),
        (b'{"x": [1, NaN]}', "x[1]"),
        (b'{"x": Infinity}', "x"),
        (b"\xef\xbb\xbf{}", "$"),
        (b'{"n": 9007199254740992}', "n"),
        (b'{"s": "\\ud800"}', "s"),
        (b'{"s": "\xff"}', "$"),
    ],
)
def test_strict_reader_refuses_with_path(raw: bytes, path: str) -> None:
    with pytest.raises(InputError) as err:
        jsonio.parse(raw)
    assert (err.value.code, err.value.path) == ("json_invalid", path)


class _Probe(Record):
    count: int
    ratio: float
    nested: Objective


@pytest.mark.parametrize(
    ("value", "code", "path"),
    [
        (
            {"count": 1, "ratio": 1.0, "nested": {"primary": "t", "minimum_effect_pct": 1}, "extra": 1},
            "field_unknown",
            "extra",
        ),
        ({"count": 1, "nested": {"primary": "t", "minimum_effect_pct": 1}}, "field_missing", "ratio"),
        (
            {"count": True, "ratio": 1.0, "nested": {"primary": "t", "minimum_effect_pct": 1}},
            "field_invalid",
            "count",
        ),
        (
            {"count": 1, "ratio": "1.0", "nested": {"primary": "t", "minimum_effect_pct": 1}},
            "field_invalid",
            "ratio",
        ),
        (
            {"count": 1, "ratio": 1.0, "nested": {"primary": "t", "minimum_effect_pct": True}},
            "field_invalid",
            "nested.minimum_effect_pct",
        ),
        (
            {"count": 1, "ratio": 1.0, "nested": {"primary": "t", "minimum_effect_pct": 1, "rank": 1}},
            "field_unknown",
            "nested.rank",
        ),
    ],
)
def test_models_reject_with_code_and_path(value: dict[str, object], code: str, path: str) -> None:
    with pytest.raises(InputError) as err:
        jsonio.load(_Probe, json.dumps(value).encode(), what="probe")
    assert (err.value.code, err.value.path) == (code, path)


def test_duplicate_key_and_nan_fail_before_the_model() -> None:
    for raw in (b'{"unit": "ms", "unit": "s"}', b'{"unit": NaN}'):
        with pytest.raises(InputError) as err:
            jsonio.load(MetricDeclaration, raw, what="metric")
        assert err.value.code == "json_invalid"
        assert err.value.path == "unit"


def test_record_bytes_are_canonical_plus_newline() -> None:
    class Doc(BaseModel):
        b: int
        a: str

    assert jsonio.record_bytes(Doc(b=1, a="x")) == b'{"a":"x","b":1}\n'
