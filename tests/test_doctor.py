from __future__ import annotations

from pathlib import Path

import jsonschema
import pytest

from conftest import gpuopt
from gpuopt import doctor, nvsmi
from gpuopt.errors import FormatError


@pytest.fixture()
def h200_xml(shared: Path) -> Path:
    return shared / "h200" / "env" / "nvidia-smi-q.xml"


def test_h200_xml_facts(h200_xml: Path) -> None:
    identity = nvsmi.parse_xml(h200_xml.read_bytes(), source="nvidia-smi-xml-file", source_detail="x")
    assert identity.driver_version == "580.159.04"
    assert identity.cuda_driver_version == "13.0"
    [gpu] = identity.gpus
    assert gpu.name == "NVIDIA H200"
    assert gpu.uuid == "GPU-317e9c49-8e0b-74cb-dec2-b011495278ae"
    assert gpu.pci_bus_id == "00000000:00:06.0"
    assert gpu.architecture == "Hopper"
    assert gpu.memory_total_bytes == 143771 * 2**20
    assert gpu.persistence_mode is True
    assert gpu.mig_mode_current is False
    assert gpu.compute_mode == "Default"
    assert gpu.power_limit_enforced_w == 700.0
    assert (gpu.clocks_max.graphics_mhz, gpu.clocks_max.sm_mhz, gpu.clocks_max.memory_mhz) == (
        1980,
        1980,
        3201,
    )
    assert gpu.clocks_applications.graphics_mhz == 1980
    # nvidia-smi -q -x does not state the compute capability: null, never guessed from the name.
    assert gpu.compute_capability is None


def test_doctor_json_validates_against_its_schema(h200_xml: Path) -> None:
    run = gpuopt("doctor", "--json", "--nvidia-smi-xml", str(h200_xml))
    assert run.code == 0, run.stderr
    envelope = run.json()
    schema_run = gpuopt("schema", "gpuopt.doctor/v1")
    assert schema_run.code == 0
    jsonschema.validate(envelope, __import__("json").loads(schema_run.stdout))
    assert envelope["ok"] is True and envelope["schema"] == "gpuopt.doctor/v1"
    assert envelope["data"]["nvidia"]["gpus"][0]["uuid"] == "GPU-317e9c49-8e0b-74cb-dec2-b011495278ae"
    [source] = envelope["provenance"]["inputs"]
    assert source["size_bytes"] == h200_xml.stat().st_size and len(source["blake3"]) == 64


def test_doctor_on_this_machine_exits_zero_and_explains_absence() -> None:
    run = gpuopt("doctor", "--json")
    assert run.code == 0, run.stderr
    data = run.json()["data"]
    if not data["gpu_present"]:
        assert data["nvidia"] is None and "no NVIDIA GPU observed" in data["gpu_note"]
    assert data["gpuopt"]["native"]["build_id"] == data["gpuopt"]["native"]["source_sha256"][:16]


@pytest.mark.parametrize(
    ("content", "code"),
    [
        (b"<nvidia_smi_log><driver_version>5", "nvidia_smi_xml_invalid"),  # truncated
        (b"\x00\xff garbage", "nvidia_smi_xml_invalid"),
        (b"<html><body/></html>", "nvidia_smi_xml_invalid"),  # another XML document
        (b"<nvidia_smi_log><attached_gpus>1</attached_gpus></nvidia_smi_log>", "nvidia_smi_xml_invalid"),
        (
            b"<nvidia_smi_log><driver_version>1</driver_version><gpu><product_name>X</product_name>"
            b"<uuid>GPU-1</uuid><fb_memory_usage><total>12 furlongs</total></fb_memory_usage></gpu>"
            b"</nvidia_smi_log>",
            "unit_unknown",
        ),
    ],
)
def test_broken_xml_is_exit_2_with_typed_code(tmp_path: Path, content: bytes, code: str) -> None:
    bad = tmp_path / "bad.xml"
    bad.write_bytes(content)
    run = gpuopt("doctor", "--json", "--nvidia-smi-xml", str(bad))
    assert run.code == 2
    envelope = run.json()
    assert envelope["ok"] is False and envelope["data"] is None
    assert [e["code"] for e in envelope["errors"]] == [code]
    assert "Traceback" not in run.stderr
    with pytest.raises(FormatError) as info:
        doctor.collect(nvidia_smi_xml=bad)
    assert info.value.code == code and info.value.exit_code == 2


def test_broken_xml_human_output_has_no_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.xml"
    bad.write_bytes(b"<nvidia_smi_log>")
    run = gpuopt("doctor", "--nvidia-smi-xml", str(bad))
    assert run.code == 2
    assert run.stdout == ""
    assert run.stderr.startswith("error[nvidia_smi_xml_invalid]:")
    assert "Traceback" not in run.stderr
