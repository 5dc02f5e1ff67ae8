# Device run E, part 1: polars (too big to travel with the rest) into /tmp/site, and the inputs built.
set -u
mkdir -p $OUT; T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
cp .devwork/pp/pp3/* /tmp/pp/ && mkdir -p /tmp/pw && cat /tmp/pp/part0 /tmp/pp/part1 /tmp/pp/part2 /tmp/pp/part3 > /tmp/pw/polars_runtime_32-2.1.0-cp311-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64.whl && cp /tmp/pp/polars-2.1.0-py3-none-any.whl /tmp/pw/ || exit 8
echo 0b838056cf365d7497971d9d9825c547766923338771c48c545b86ead2ebc572 /tmp/pw/polars_runtime_32-2.1.0-cp311-abi3-manylinux_2_17_x86_64.manylinux2014_x86_64.whl | sha256sum -c || exit 8
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site /tmp/pw/*.whl || exit 1
python3 -c "import numpy; print('numpy', numpy.__version__)" 2>&1
nproc; grep -m1 "model name" /proc/cpuinfo; free -g | head -2; df -h /tmp | tail -1
mkdir -p /tmp/nb /tmp/kt
gunzip -c tests/data/fixtures/h200/nsys/eager.sqlite.fixture.gz > /tmp/nb/seed.sqlite
(python3 -c "
import sys; sys.path.insert(0, 'benchmarks'); import torch_trace_bench as b; from pathlib import Path
print(b.build_trace(Path('/tmp/kt/trace.json'), 1024))" > /tmp/kt/build.log 2>&1) &
(python3 .devwork/p5a/grow_nsys_sqlite.py /tmp/nb/seed.sqlite /tmp/nb/big.sqlite 12630 > /tmp/nb/grow.log 2>&1) &
(python3 .devwork/p5a/grow_nsys_sqlite.py /tmp/nb/seed.sqlite /tmp/nb/huge.sqlite 32768 > /tmp/nb/grow2.log 2>&1) &
wait; el built; ls -la /tmp/nb /tmp/kt; tail -2 /tmp/nb/grow.log /tmp/kt/build.log
