"""Read GPU identity from ``nvidia-smi -q -x`` XML (a live run or a saved file)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from gpuopt.errors import FormatError, shape_of
from gpuopt.models.doctor import GpuClocks, GpuIdentity, NvidiaIdentity, NvidiaSource

# Values nvidia-smi prints where a fact is not available; they become null, never a number.
_ABSENT = {"n/a", "[n/a]", "not supported", "[not supported]", "unknown error", "none", ""}
_DEPRECATED_PREFIX = "requested functionality has been deprecated"
_MEMORY_UNITS: dict[str, float] = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
_QUANTITY = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z%]+)\s*$")


def _text(node: ET.Element, path: str) -> str | None:
    found = node.find(path)
    if found is None or found.text is None:
        return None
    value = found.text.strip()
    lowered = value.lower()
    if lowered in _ABSENT or lowered.startswith(_DEPRECATED_PREFIX):
        return None
    return value


def _required(node: ET.Element, path: str, where: str) -> str:
    value = _text(node, path)
    if value is None:
        raise FormatError(
            "nvidia_smi_xml_invalid",
            f"nvidia-smi XML has no value for <{path}>",
            path=f"{where}/{path}",
            expected="a non-empty element",
            observed="missing or N/A",
        )
    return value


def _quantity(node: ET.Element, path: str, units: dict[str, float], where: str) -> float | None:
    raw = _text(node, path)
    if raw is None:
        return None
    match = _QUANTITY.match(raw)
    if match is None or match.group(2) not in units:
        raise FormatError(
            "unit_unknown",
            f"nvidia-smi XML <{path}> has a value gpuopt cannot read",
            path=f"{where}/{path}",
            expected=f"a number followed by one of {sorted(units)}",
            observed=shape_of(raw),
        )
    return float(match.group(1)) * units[match.group(2)]


def _int_quantity(node: ET.Element, path: str, units: dict[str, float], where: str) -> int | None:
    value = _quantity(node, path, units, where)
    return None if value is None else int(value)


def _flag(node: ET.Element, path: str, where: str) -> bool | None:
    raw = _text(node, path)
    if raw is None:
        return None
    if raw.lower() in ("enabled", "yes"):
        return True
    if raw.lower() in ("disabled", "no"):
        return False
    raise FormatError(
        "nvidia_smi_xml_invalid",
        f"nvidia-smi XML <{path}> is neither Enabled nor Disabled",
        path=f"{where}/{path}",
        expected="Enabled or Disabled",
        observed=shape_of(raw),
    )


def _clocks(node: ET.Element, section: str, where: str) -> GpuClocks:
    mhz = {"MHz": 1.0}
    return GpuClocks(
        graphics_mhz=_int_quantity(node, f"{section}/graphics_clock", mhz, where),
        sm_mhz=_int_quantity(node, f"{section}/sm_clock", mhz, where),
        memory_mhz=_int_quantity(node, f"{section}/mem_clock", mhz, where),
    )


def _power_limit(gpu: ET.Element, where: str) -> float | None:
    watts = {"W": 1.0}
    # Newer drivers (XML v12+) put limits in gpu_power_readings; older ones in power_readings.
    for path in (
        "gpu_power_readings/current_power_limit",
        "power_readings/enforced_power_limit",
        "power_readings/power_limit",
    ):
        value = _quantity(gpu, path, watts, where)
        if value is not None:
            return value
    return None


def _gpu(index: int, gpu: ET.Element) -> GpuIdentity:
    where = f"gpu[{index}]"
    return GpuIdentity(
        index=index,
        name=_required(gpu, "product_name", where),
        uuid=_required(gpu, "uuid", where),
        pci_bus_id=_text(gpu, "pci/pci_bus_id") or gpu.get("id"),
        architecture=_text(gpu, "product_architecture"),
        compute_capability=None,
        memory_total_bytes=_int_quantity(gpu, "fb_memory_usage/total", _MEMORY_UNITS, where),
        persistence_mode=_flag(gpu, "persistence_mode", where),
        mig_mode_current=_flag(gpu, "mig_mode/current_mig", where),
        mig_mode_pending=_flag(gpu, "mig_mode/pending_mig", where),
        compute_mode=_text(gpu, "compute_mode"),
        power_limit_enforced_w=_power_limit(gpu, where),
        clocks_max=_clocks(gpu, "max_clocks", where),
        clocks_applications=_clocks(gpu, "applications_clocks", where),
    )


def parse_xml(data: bytes, *, source: NvidiaSource, source_detail: str) -> NvidiaIdentity:
    """Parses ``nvidia-smi -q -x`` output; a damaged or foreign document is a ``FormatError``."""
    try:
        root = ET.fromstring(data)
    except ET.ParseError as exc:
        raise FormatError(
            "nvidia_smi_xml_invalid",
            f"not well-formed nvidia-smi XML: {exc}",
            path=source_detail,
            expected="the output of nvidia-smi -q -x",
        ) from None
    if root.tag != "nvidia_smi_log":
        raise FormatError(
            "nvidia_smi_xml_invalid",
            "the XML document is not an nvidia-smi log",
            path=source_detail,
            expected="<nvidia_smi_log>",
            observed=f"<{root.tag}>",
        )
    gpus = [_gpu(i, node) for i, node in enumerate(root.findall("gpu"))]
    attached = _text(root, "attached_gpus")
    if attached is not None and attached.isdigit() and int(attached) != len(gpus):
        raise FormatError(
            "nvidia_smi_xml_invalid",
            "nvidia-smi XML lists a different number of GPUs than it says are attached",
            path=source_detail,
            expected=f"{attached} <gpu> elements",
            observed=str(len(gpus)),
        )
    return NvidiaIdentity(
        source=source,
        source_detail=source_detail,
        driver_version=_required(root, "driver_version", "nvidia_smi_log"),
        cuda_driver_version=_text(root, "cuda_version"),
        gpus=gpus,
    )


def with_compute_capabilities(identity: NvidiaIdentity, by_uuid: dict[str, str]) -> NvidiaIdentity:
    """Fills compute capabilities from a second query (``--query-gpu=uuid,compute_cap``)."""
    gpus = [g.model_copy(update={"compute_capability": by_uuid.get(g.uuid)}) for g in identity.gpus]
    return identity.model_copy(update={"gpus": gpus})
