#!/usr/bin/env bash
# The regression gate end to end on the bundled CPU example (numpy layer norm), as two CI jobs would run it.
# CI runs this after pytest (.ci/run); a user can run it by hand: bash examples/ci/cpu-gate.sh [WORKDIR].
#
# Job "main": freeze the Target (gpuopt example run: readiness, baseline, noise, experiments, ...), save the
# original's measured calls as the baseline "main", export it as one file (what a CI cache or an artifact
# store carries), and check the no-effect candidate (pass, exit 0) and the slower candidate (regression,
# exit 10). Job "pr": a root of the same Target restored from the cache made before the baseline existed,
# the bundle imported, the same two checks: the same verdicts. Every check writes its Markdown summary and
# JUnit XML next to the bundle.
set -euo pipefail

work=${1:-$(mktemp -d "${TMPDIR:-/tmp}/gpuopt-gate-ci.XXXXXX")}
mkdir -p "$work"
example="$work/example"
out="$work/out"
mkdir -p "$out"

# expect CODE CMD...: runs CMD, fails unless it exits CODE.
expect() {
    local want=$1
    shift
    set +e
    "$@"
    local got=$?
    set -e
    if [ "$got" != "$want" ]; then
        echo "cpu-gate: expected exit $want, got $got: $*" >&2
        exit 1
    fi
}

# ---- job "main" ----------------------------------------------------------------------------------------
gpuopt example run "$example" --json > "$out/example.json"
root="$example/root"
# The Target's root before any gate baseline: what the "pr" job restores from its cache.
cp -a "$root" "$work/cached-root"

# The original's calls from the no-effect target (reference role: the original, 5 pairs per case,
# same-process, as the formal comparisons of the example measure).
source_inv=$(python -c '
import json, sys
steps = json.load(open(sys.argv[1]))["data"]["steps"]
print(next(s["record"] for s in steps if s["step"] == "target" and s["subject"] == "no_effect"))
' "$out/example.json")
gpuopt gate save main --root "$root" --from "$source_inv" --role reference
gpuopt gate export main --root "$root" --out "$out/main.gpuopt-gate"

cd "$example"
expect 0 gpuopt gate check main --root root --source project/candidates/no_effect \
    --markdown "$out/main-no_effect.md" --junit "$out/main-no_effect.xml"
expect 10 gpuopt gate check main --root root --source project/candidates/slower \
    --markdown "$out/main-slower.md" --junit "$out/main-slower.xml"

# ---- job "pr": another root of the same Target, the baseline imported from the bundle ----------------------
gpuopt gate import "$out/main.gpuopt-gate" --root "$work/cached-root"
expect 0 gpuopt gate check main --root "$work/cached-root" --source project/candidates/no_effect \
    --markdown "$out/pr-no_effect.md" --junit "$out/pr-no_effect.xml"
expect 10 gpuopt gate check main --root "$work/cached-root" --source project/candidates/slower \
    --markdown "$out/pr-slower.md" --junit "$out/pr-slower.xml"

echo "cpu-gate: no_effect passed (0), slower regressed (10), in both jobs; outputs in $out"
