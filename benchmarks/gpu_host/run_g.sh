# Device run G: which CPUs share a core, and does the Kineto rate on 2 CPUs depend on that?
set -u
mkdir -p $OUT; T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
lscpu | grep -i "model name\|thread\|core\|socket\|MHz\|numa\|L2\|L3"
for c in 0 1 2 3 8 9; do echo "cpu$c siblings $(cat /sys/devices/system/cpu/cpu$c/topology/thread_siblings_list) core $(cat /sys/devices/system/cpu/cpu$c/topology/core_id)"; done
mkdir -p /tmp/kt
python3 -c "
import sys; sys.path.insert(0, 'benchmarks'); import torch_trace_bench as b; from pathlib import Path
print(b.build_trace(Path('/tmp/kt/trace.json'), 1024))" > /tmp/kt/build.log 2>&1
el built; tail -c 300 /tmp/kt/build.log; uptime
T=/tmp/kt/trace.json; B=.devwork/p7/rate_head
SIB=$(cat /sys/devices/system/cpu/cpu0/topology/thread_siblings_list)
OTHER=$(for c in $(seq 1 15); do s=$(cat /sys/devices/system/cpu/cpu$c/topology/thread_siblings_list); [ "$s" != "$SIB" ] && echo $c && break; done)
echo "pairs: 0,1 and 0,$OTHER"
for r in 1 2 3 4; do for cp in 0,1 0,$OTHER; do for b in rate_head rate_u8seg; do RAYON_NUM_THREADS=2 /usr/bin/time -f "$b cpus=$cp %e s %U u %S s %M KB" taskset -c $cp .devwork/p7/$b --child gpuopt $T >/dev/null; done; done; done 2>&1 | tee $OUT/pairs.txt
for r in 1 2; do /usr/bin/time -f "sonic cpu0 %e s %U u %S s" taskset -c 0 $B --child sonic $T > /dev/null; done 2>&1 | tee -a $OUT/pairs.txt
el done; uptime
