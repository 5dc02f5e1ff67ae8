# Device run E, part 2 (issue 28): Kineto rate on 2 CPUs (new reader vs the one before it, beside sonic-rs,
# and through the wheel), gaps/timeline/summary/nvtx peak memory on the 4.3 GB export, cold nsys stats.
set -u
mkdir -p $OUT; T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
ls /tmp/site >/dev/null || { echo "no /tmp/site: part 1 lost"; exit 9; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .devwork/p5b/whl/*.whl || exit 1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
NSYS=/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys
(nvidia-smi -L; nproc; grep -m1 "model name" /proc/cpuinfo; python3 -c "import gpuopt, polars, sys; print(sys.version, polars.__version__)"; $NSYS --version; uptime) 2>&1 | tee $OUT/info.txt
ls -la /tmp/nb /tmp/kt
el kineto rust; .devwork/p5b/rate_new /tmp/kt/trace.json --rounds 5 --threads 2 --cpus 0,1 --baseline .devwork/p5b/rate_base 2>&1 | tee $OUT/kineto_rust.txt
el kineto py; timeout 120 taskset -c 0,1 python3 benchmarks/torch_trace_bench.py --trace /tmp/kt/trace.json --no-peer --rounds 3 2>&1 | tee $OUT/kineto_py.txt
el scale; timeout 200 python3 benchmarks/nsys_scale_bench.py --file /tmp/nb/huge.sqlite --commands timeline,gaps,gaps-first,summary,nvtx --no-peers 2>&1 | tee $OUT/nsys_scale.txt
el cold all; timeout 150 python3 benchmarks/nsys_stats_process_bench.py /tmp/nb/big.sqlite --nsys $NSYS --rounds 3 2>&1 | tee $OUT/nsys_stats_all.txt
el cold 2; timeout 150 python3 benchmarks/nsys_stats_process_bench.py /tmp/nb/big.sqlite --nsys $NSYS --rounds 3 --cpus 2 2>&1 | tee $OUT/nsys_stats_2cpu.txt
el done; uptime
