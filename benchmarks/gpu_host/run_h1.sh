# Device run H, part 1 (issue 28, 2026-12-07 night): every figure of the issue at one head, on one machine.
# The wheel (no polars: `gpuopt nsys stats` does not import it) into /tmp/site; the inputs built; the
# Kineto rate on 2 CPUs (this head against run G's build, beside sonic-rs, and through the wheel); cold
# `nsys stats` on all CPUs and on 2.
set -u
mkdir -p $OUT; T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .devwork/p8/whl/*.whl || exit 1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
NSYS=/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys
(nvidia-smi -L; nproc; grep -m1 "model name" /proc/cpuinfo; $NSYS --version; uptime) 2>&1 | tee $OUT/info.txt
mkdir -p /tmp/nb /tmp/kt
gunzip -c tests/data/fixtures/h200/nsys/eager.sqlite.fixture.gz > /tmp/nb/seed.sqlite
cp .devwork/p5a/grow_nsys_sqlite.py /tmp/nb/
(python3 -c "
import sys; sys.path.insert(0, 'benchmarks'); import torch_trace_bench as b; from pathlib import Path
print(b.build_trace(Path('/tmp/kt/trace.json'), 1024))" > /tmp/kt/build.log 2>&1) &
(python3 /tmp/nb/grow_nsys_sqlite.py /tmp/nb/seed.sqlite /tmp/nb/big.sqlite 12630 > /tmp/nb/grow.log 2>&1) &
wait; el built; ls -la /tmp/nb /tmp/kt; tail -2 /tmp/nb/grow.log /tmp/kt/build.log; uptime
el kineto rust; .devwork/p8/rate_head /tmp/kt/trace.json --rounds 3 --threads 2 --cpus 0,1 --baseline .devwork/p8/rate_g 2>&1 | tee $OUT/kineto_rust.txt
el kineto py; timeout 120 taskset -c 0,1 python3 benchmarks/torch_trace_bench.py --trace /tmp/kt/trace.json --no-peer --rounds 2 2>&1 | tee $OUT/kineto_py.txt
el cold all; timeout 150 python3 benchmarks/nsys_stats_process_bench.py /tmp/nb/big.sqlite --nsys $NSYS --rounds 2 2>&1 | tee $OUT/nsys_stats_all.txt
el cold 2; timeout 150 python3 benchmarks/nsys_stats_process_bench.py /tmp/nb/big.sqlite --nsys $NSYS --rounds 2 --cpus 2 2>&1 | tee $OUT/nsys_stats_2cpu.txt
el done; uptime; ls -la /tmp/nb
