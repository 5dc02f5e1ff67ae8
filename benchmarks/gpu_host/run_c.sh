# Device run C (issue 28): cold nsys stats with the identity's parallel leaves (new) against the wheel of run B (old),
# same machine, same export, back to back; all CPUs and 2.
set -u
mkdir -p $OUT; T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/old .devwork/p2/whl/*.whl || exit 1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/new .devwork/p3/new/*.whl $(ls .devwork/p2/whl/*.whl | grep -v gpuopt) || exit 1
export PYTHONUNBUFFERED=1
NSYS=/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys
mkdir -p /tmp/nb; gunzip -c tests/data/fixtures/h200/nsys/eager.sqlite.fixture.gz > /tmp/nb/seed.sqlite
el grow; python3 .devwork/p2/grow_nsys_sqlite.py /tmp/nb/seed.sqlite /tmp/nb/big.sqlite 12630 > /tmp/nb/grow.log 2>&1; sleep 3
for cpus in 16 2; do for v in new old new old; do
  el $v $cpus; PYTHONPATH=/tmp/$v python3 benchmarks/nsys_stats_process_bench.py /tmp/nb/big.sqlite --nsys $NSYS --rounds 3 --cpus $cpus 2>&1 | tee -a $OUT/nsys_stats_${v}_${cpus}.txt
done; done
el done
