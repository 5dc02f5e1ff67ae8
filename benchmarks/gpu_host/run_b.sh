# Device run B (wave 3, issue 28 performance): cold/warm nsys stats vs NVIDIA's on the GPU host
# (all CPUs and 2), Kineto rate on 2 CPUs (gpuopt's wheel through Python, and the Rust bench beside sonic-rs).
set -u
R=$PWD; mkdir -p $OUT; T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .devwork/p2/whl/*.whl || exit 1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
NSYS=/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys
(nvidia-smi -L; nproc; grep -m1 "model name" /proc/cpuinfo; free -g | head -2; python3 -c "import gpuopt, sys; print(sys.version)"; $NSYS --version) > $OUT/info.txt 2>&1
cat $OUT/info.txt
mkdir -p /tmp/nb /tmp/kt
gunzip -c tests/data/fixtures/h200/nsys/eager.sqlite.fixture.gz > /tmp/nb/seed.sqlite
(el kineto build; python3 -c "
import sys; sys.path.insert(0, 'benchmarks'); import torch_trace_bench as b; from pathlib import Path
print(b.build_trace(Path('/tmp/kt/trace.json'), 1024))") &
el grow; python3 .devwork/p2/grow_nsys_sqlite.py /tmp/nb/seed.sqlite /tmp/nb/big.sqlite ${REPS:-12630} > /tmp/nb/grow.log 2>&1; ls -la /tmp/nb
sleep 3; wait
el nsys all CPUs; python3 benchmarks/nsys_stats_process_bench.py /tmp/nb/big.sqlite --nsys $NSYS --rounds 3 2>&1 | tee $OUT/nsys_stats_all.txt
el nsys 2 CPUs; python3 benchmarks/nsys_stats_process_bench.py /tmp/nb/big.sqlite --nsys $NSYS --rounds 3 --cpus 2 2>&1 | tee $OUT/nsys_stats_2cpu.txt
el kineto rust; .devwork/p2/torch_trace_rate /tmp/kt/trace.json --rounds 5 --threads 2 --cpus 0,1 2>&1 | tee $OUT/kineto_rust.txt
el kineto py; timeout 150 python3 benchmarks/torch_trace_bench.py --trace /tmp/kt/trace.json --no-peer --rounds 3 2>&1 | tee $OUT/kineto_py.txt
el done
