"""Execution maps (spec §8): where a window's time goes over selected timelines, per group of events."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from gpuopt.models.evaluation.common import Count, Name, ObjectDigest, Record, RecordRef, Sha256, TargetId

MapId = Annotated[str, StringConstraints(pattern=r"^map-[0-9a-f]{64}$")]
GroupKey = Literal["timeline", "category", "name"]
Ns = Annotated[int, Field(ge=0)]


class MapSource(Record):
    """The event file the map was computed from."""

    file: str = Field(description="The event file's name (not its path)")
    format: Literal["jsonl", "parquet", "arrow"] = Field(
        description="The event file's format: jsonl, parquet or arrow"
    )
    sha256: Sha256 = Field(description="SHA-256 of the event file's bytes as read")
    digest: ObjectDigest | None = Field(
        description="The frozen object (objects/trees/<digest>.json) holding the file; set with --root"
    )
    time_unit: Literal["ns", "us"] = Field(
        description="ns: integer start_ns/end_ns; us: start_us/end_us rounded to the nearest ns"
    )
    producer: Literal["gpuopt map account"] = Field(description="gpuopt map account")
    version: str = Field(description="The gpuopt version that computed the map")


class MapBinding(Record):
    """What the map is evidence about: a Target, one of its variants and one of its cases."""

    target_id: TargetId = Field(description="The Target the map belongs to")
    variant_digest: ObjectDigest = Field(description="The variant's tree digest")
    case_id: Name = Field(description="The case measured")


class MapWindow(Record):
    start_ns: Ns = Field(description="Window start (ns, the events' clock)")
    end_ns: Ns = Field(description="Window end (ns)")
    explicit: bool = Field(description="false: the hull [first start, last end] of the selected events")


class MapTotals(Record):
    window_ns: Ns = Field(description="end_ns - start_ns (ns)")
    events: Count = Field(description="Events with time (or, if zero-length, their instant) in the window")
    union_ns: Ns = Field(description="Time with at least one event active")
    idle_ns: Ns = Field(description="window_ns - union_ns: time the selection attributes to nothing")
    overlap_excess_ns: Ns = Field(description="Sum of (active - 1) * width where more than one is active")
    max_concurrency: Count = Field(description="Most events active on a segment of positive width")
    serial_ns: Ns = Field(description="Sum of clipped durations = union_ns + overlap_excess_ns")
    zero_length_events: Count = Field(description="Events of zero duration (counted at their instant)")


class MapGroup(Record):
    key: dict[GroupKey, str] = Field(description="The group's value of each --group-by field")
    count: Count = Field(description="Events of the group in the window")
    zero_length: Count = Field(description="Of those, zero-length events")
    serial_ns: Ns = Field(description="Sum of the group's clipped durations (ns; overlaps each count)")
    union_ns: Ns = Field(
        description="Removable-time ceiling: the most wall time the group's own intervals could free if it "
        "vanished (an upper bound: launch, sync and CPU costs ignored)"
    )
    exclusive_ns: Ns = Field(description="Time with this group, and no other, active")
    share_of_window: float | None = Field(description="union_ns / window_ns (null for an empty window)")


class ExecutionMap(Record):
    """``maps/map-<64hex>.json``, create-once; the id is the digest of every other field."""

    format: Literal["gpuopt.execution-map/v1"] = Field(
        description="Document format: always gpuopt.execution-map/v1"
    )
    id: MapId = Field(
        description="map- and the SHA-256 of every other field's canonical JSON: equal maps have equal "
        "ids, so a map is written once"
    )
    source: MapSource = Field(
        description="The event file the map was computed from (name, format, SHA-256, frozen object)"
    )
    binding: MapBinding = Field(description="The Target, variant and case the map is evidence about")
    window: MapWindow = Field(description="The time window accounted (ns on the events' clock)")
    timelines: list[str] = Field(description="The selected timelines, sorted")
    group_by: list[GroupKey] = Field(
        description="The fields events were grouped by (timeline, category, name), in the order given"
    )
    totals: MapTotals = Field(description="Totals over the window and the selected timelines")
    groups: list[MapGroup] = Field(description="Groups with an event in the window, sorted by key")


class MapAccountData(Record):
    """``gpuopt map account``: the map, and its record when written to an artifact root."""

    record: RecordRef | None = Field(description="maps/<id>.json and its sha256 (with --root)")
    created: bool | None = Field(description="false: an identical map record already existed")
    source: MapSource = Field(description="The event file read")
    binding: MapBinding | None = Field(description="Target, variant and case (with --root); null otherwise")
    window: MapWindow = Field(description="The window accounted")
    timelines: list[str] = Field(description="Timelines (tracks) present in the events")
    group_by: list[GroupKey] = Field(description="The fields events were grouped by")
    totals: MapTotals = Field(description="Totals over the window")
    groups: list[MapGroup] = Field(description="One entry per group")
