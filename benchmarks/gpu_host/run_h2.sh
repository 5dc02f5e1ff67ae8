# Device run H, part 2: polars joined from four pieces (`.devwork/pp/pp0..2` copied to /tmp/pp by one call
# each, pp3 carried here), then the 4.3 GB export grown from part 1's seed and the whole-export commands'
# peak memory on it.
set -u
mkdir -p $OUT; T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
cp .devwork/pp/pp3/* /tmp/pp/ && mkdir -p /tmp/pw && cat /tmp/pp/part0 /tmp/pp/part1 /tmp/pp/part2 /tmp/pp/part3 > /tmp/pw/polars_runtime_32-2.1.0-cp311-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64.whl && cp /tmp/pp/polars-2.1.0-py3-none-any.whl /tmp/pw/ || exit 8
echo 0b838056cf365d7497971d9d9825c547766923338771c48c545b86ead2ebc572 /tmp/pw/polars_runtime_32-2.1.0-cp311-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64.whl | sha256sum -c || exit 8
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site /tmp/pw/*.whl || exit 1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
[ -f /tmp/nb/huge.sqlite ] || python3 /tmp/nb/grow_nsys_sqlite.py /tmp/nb/seed.sqlite /tmp/nb/huge.sqlite 32768 > /tmp/nb/grow2.log 2>&1; el grown; tail -2 /tmp/nb/grow2.log; ls -la /tmp/nb
timeout 300 python3 benchmarks/nsys_scale_bench.py --file /tmp/nb/huge.sqlite --commands gaps,gaps-first,timeline,summary,nvtx --no-peers 2>&1 | tee $OUT/nsys_scale.txt
el done; uptime
