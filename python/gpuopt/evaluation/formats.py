"""The one table of evaluation format versions and stable error codes (spec §3.1, §4.4)."""

from __future__ import annotations

TARGET = "gpuopt.target/v2"
"""v2: inherited variables keep a keyed digest, values only where ``env_record`` says; v1 is still read."""
TREE = "gpuopt.tree/v1"
INVOCATION_REQUEST = "gpuopt.invocation-request/v1"
INVOCATION_RESULT = "gpuopt.invocation-result/v1"
DRIVER = "gpuopt.driver/v1"
DRIVER_REQUEST = "gpuopt.driver-request/v1"
DRIVER_RESULT = "gpuopt.driver-result/v1"
READINESS_FAILURE = "gpuopt.readiness-failure/v1"
EVALUATION = "gpuopt.evaluation/v1"
"""The evaluation format as a whole, part of every invocation's tool identity."""

# Errors a caller sees (exit 2 unless noted in ABSENT_CODES).
INPUT_CODES = (
    "json_invalid",
    "field_unknown",
    "field_missing",
    "field_invalid",
    "plan_invalid",
    "case_unknown",
)
STORE_CODES = (
    "root_exists",
    "root_not_found",
    "storage_unsupported",
    "path_unsafe",
    "object_symlink",
    "object_special_file",
    "object_changed_during_read",
    "object_limit_exceeded",
    "object_name_invalid",
    "object_corrupt",
    "object_not_found",
    "destination_exists",
    "record_changed",
    "record_invalid",
    "record_conflict",
    "ledger_corrupt",
    "stale_reference",
)
TARGET_CODES = (
    "target_not_found",
    "target_changed",
    "target_invalid",
    "target_not_optimizable",
    "claim_layer_invalid",
    "metric_declaration_invalid",
    "accuracy_rule_invalid",
    "statistics_invalid",
    "contamination_rule_invalid",
    "driver_not_found",
    "driver_changed",
    "environment_changed",
    "environment_key_missing",
    "identity_mismatch",
    "identity_changed",
    "gpu_busy",
    "smoke_failed",
    "tool_absent",
    "gpu_not_found",
    "sampler_unavailable",
)
INVOCATION_CODES = (
    "invocation_not_found",
    "retry_required",
    "retry_invalid",
    "cleanup_unconfirmed",
    "deadline_passed",
    "tool_identity_changed",
    "invocation_lost",
)
ABSENT_CODES = ("tool_absent", "gpu_not_found", "sampler_unavailable")

# Driver-call gate codes (violations in a call receipt; the first becomes the stop reason).
GATE_CODES = (
    "command_failed",
    "driver_left_processes",
    "cleanup_unconfirmed",
    "result_missing",
    "bundle_invalid",
    "bundle_undeclared_member",
    "bundle_artifact_mismatch",
    "echo_mismatch",
    "subject_mismatch",
    "driver_cleanup_unconfirmed",
    "metric_set_mismatch",
    "unit_mismatch",
    "sample_count_mismatch",
    "nonpositive_metric_value",
    "correctness_metric_missing",
    "window_invalid",
    "identity_changed",
)

# Stop reasons of invocations (§6.8).
STOP_REASONS = (
    "completed",
    "correctness_failed",
    "identity_changed",
    "stale_reference",
    "tool_identity_changed",
    "driver_changed",
    "environment_changed",
    "target_changed",
    "gpu_busy",
    "launch_deadline_exceeded",
    "command_failed",
    "worker_error",
    "cleanup_unconfirmed",
    "resource_cleanup_unknown",
    "command_timeout",
    "operation_timeout",
    "resource_wait_timeout",
    "absolute_deadline",
    "cancelled",
    *GATE_CODES,
)
