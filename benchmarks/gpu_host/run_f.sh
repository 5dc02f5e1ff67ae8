# Device run F: does huge-page backing (glibc's malloc tunable) change the Kineto rate and nsys timeline here?
set -u
mkdir -p $OUT; T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
python3 -m pip install -q --no-index --no-deps --no-cache-dir --upgrade --target /tmp/site .devwork/p6/whl/*.whl || exit 1
mkdir -p /tmp/nb /tmp/kt
gunzip -c tests/data/fixtures/h200/nsys/eager.sqlite.fixture.gz > /tmp/nb/seed.sqlite
(python3 -c "
import sys; sys.path.insert(0, 'benchmarks'); import torch_trace_bench as b; from pathlib import Path
print(b.build_trace(Path('/tmp/kt/trace.json'), 1024))" > /tmp/kt/build.log 2>&1) &
(python3 .devwork/p6/grow_nsys_sqlite.py /tmp/nb/seed.sqlite /tmp/nb/big.sqlite 12630 > /tmp/nb/grow.log 2>&1) &
wait; el built; cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag
T=/tmp/kt/trace.json; B=.devwork/p6/rate_new
el rate; $B $T --rounds 9 --threads 2 --cpus 0,1 --baseline .devwork/p6/rate_base 2>&1 | tail -7 | tee $OUT/kineto_rate9.txt
el thp
for r in 1 2 3 4 5 6; do for t in "" "glibc.malloc.hugetlb=1"; do GLIBC_TUNABLES=$t /usr/bin/time -f "kineto tun=[$t] %e s %U u %S s %M KB %R minflt" taskset -c 0,1 $B --child gpuopt $T >/dev/null; done; done 2>&1 | tee $OUT/kineto_thp.txt
export PYTHONPATH=/tmp/site
for r in 1 2 3; do for t in "" "glibc.malloc.hugetlb=1"; do GLIBC_TUNABLES=$t /usr/bin/time -f "timeline tun=[$t] %e s %U u %S s %M KB %R minflt" taskset -c 0,1 python3 -m gpuopt nsys timeline /tmp/nb/big.sqlite --json >/dev/null; done; done 2>&1 | tee $OUT/timeline_thp.txt
grep -i AnonHuge /proc/meminfo; el done
