"""``gpuopt.names``: the one rule by which an option's name finds a range, kernel or op."""

from __future__ import annotations

import pytest

from gpuopt.errors import InputError
from gpuopt.names import closest, matches, resolve

NSYS_RANGES = [":decode_step", ":prefill", "NCCL:allreduce", ":aten::mm", "ProfilerStep#3", "ProfilerStep#4"]


@pytest.mark.parametrize(
    ("given", "name", "hit"),
    [
        ("decode_step", ":decode_step", True),
        (":decode_step", ":decode_step", True),
        ("allreduce", "NCCL:allreduce", True),
        ("NCCL:allreduce", "NCCL:allreduce", True),
        ("aten::mm", ":aten::mm", True),  # the default domain's ':' prefix; '::' stays text
        ("mm", "aten::mm", False),  # 'aten' is not a domain: ':: ' is part of the op's name
        ("ProfilerStep", "ProfilerStep#3", True),
        ("ProfilerStep#*", "ProfilerStep#4", True),
        ("decode  step", ":decode step", True),  # whitespace collapsed
        ("decode", ":decode_step", False),  # no prefix matching
    ],
)
def test_the_matching_rule(given: str, name: str, hit: bool) -> None:
    assert matches(given, name) is hit


def test_resolve_finds_the_tag_and_every_profiler_step() -> None:
    assert resolve("decode_step", NSYS_RANGES, option="--marker", what="NVTX range") == [":decode_step"]
    assert resolve("ProfilerStep", NSYS_RANGES, option="--marker", what="NVTX range") == [
        "ProfilerStep#3",
        "ProfilerStep#4",
    ]


def test_a_text_in_two_domains_is_ambiguous() -> None:
    with pytest.raises(InputError) as err:
        resolve("step", [":step", "NCCL:step"], option="--marker", what="NVTX range")
    assert err.value.code == "name_ambiguous" and err.value.observed == ":step, NCCL:step"
    assert resolve(":step", [":step", "NCCL:step"], option="--marker", what="NVTX range") == [":step"]


def test_no_match_is_an_error_with_the_closest_names_first() -> None:
    with pytest.raises(InputError) as err:
        resolve("decode_stp", NSYS_RANGES, option="--marker", what="NVTX range")
    assert err.value.code == "name_unknown" and err.value.exit_code == 2
    assert closest("decode_stp", NSYS_RANGES)[0] == ":decode_step"
    assert "closest: :decode_step" in str(err.value)
    with pytest.raises(InputError) as none:
        resolve("x", [], option="--marker", what="NVTX range")
    assert "there are no NVTX ranges" in str(none.value)


def test_a_kernel_filter_that_matches_nothing_is_exit_2_with_the_closest_names() -> None:
    from conftest import gpuopt
    from fixture_data import unpacked

    report = unpacked() / "h200" / "ncu" / "kernels_full.ncu-rep"
    run = gpuopt("ncu", "launches", str(report), "--kernel", "vecadd", "--json")
    assert run.code == 2
    error = run.json()["errors"][0]
    assert error["code"] == "name_unknown" and error["observed"].startswith("vec_add, ")
