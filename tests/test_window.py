"""``--window`` has one grammar and one error code: ``gpuopt nsys`` and ``gpuopt map`` read it through
:mod:`gpuopt._window`, so the same bad text gets the same code, message, expected and observed in both."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import gpuopt
from gpuopt import map as gmap
from gpuopt import nsys
from gpuopt.errors import InputError

BAD = ["5:3", "5:5", "abc", "1:2:3", "a:b", "1e3:2", "99999999999999999999999:1", "7.2s:7.1s"]


def _error(fn: object, text: str) -> dict[str, object]:
    with pytest.raises(InputError) as info:
        fn(text)  # type: ignore[operator]
    return info.value.to_dict()


@pytest.mark.parametrize("text", BAD)
def test_nsys_and_map_refuse_a_bad_window_alike(text: str) -> None:
    from_nsys = _error(nsys.parse_window, text)
    assert from_nsys == _error(gmap.parse_window, text)
    assert (from_nsys["code"], from_nsys["path"]) == ("window_invalid", "window")
    assert from_nsys["observed"] in (text, *text.split(":"))


def test_the_messages_name_the_text() -> None:
    assert _error(nsys.parse_window, "5:3")["message"] == "the window 5:3 is empty"
    assert _error(nsys.parse_window, "a:b")["message"] == "cannot read 'a' as a time"
    assert _error(nsys.parse_window, "1:2:3")["message"] == "cannot read '1:2:3' as a window"
    # where the areas differ, on purpose: nsys may leave a side open, map's window starts at or after 0
    assert nsys.parse_window("7.2s:") == (7_200_000_000, None)
    assert _error(gmap.parse_window, "7.2s:")["code"] == "window_invalid"
    assert _error(gmap.parse_window, "-5:3")["message"] == "the window -5:3 starts before 0"
    assert nsys.parse_window("-5:3") == (-5, 3)


def test_both_clis_give_one_code_and_message(shared: Path, tmp_path: Path) -> None:
    events = tmp_path / "e.jsonl"
    event = {"timeline": "s", "start_ns": 0, "end_ns": 10, "category": "k", "name": "a"}
    events.write_text(json.dumps(event))
    for text in ("5:3", "a:b"):
        runs = [
            gpuopt("nsys", "kernels", str(shared / "h200/nsys/eager.sqlite"), "--window", text, "--json"),
            gpuopt("map", "account", str(events), "--window", text, "--json"),
        ]
        assert [r.code for r in runs] == [2, 2], [r.stderr for r in runs]
        errors = [r.json()["errors"][0] for r in runs]
        assert errors[0] == errors[1] == _error(nsys.parse_window, text)


def test_a_tuple_window_gets_the_same_error_in_map() -> None:
    with pytest.raises(InputError) as info:
        gmap.account(Path("unused.jsonl"), window=(5, 3))
    assert info.value.to_dict() == _error(gmap.parse_window, "5:3")
