# Device run 1: eager decode capture (issue 20) and 5+5+5 interleaved softmax captures (issue 15).
set -u
R=$PWD; W=/tmp/w; mkdir -p $W $OUT; cd $W
NSYS=/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys
mkdir -p /tmp/dw; for f in $R/.devwork/debs/*.deb; do dpkg -x $f /tmp/dw; done
export LD_LIBRARY_PATH=/tmp/dw/usr/lib/x86_64-linux-gnu:/tmp/dw/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
(nvidia-smi -L; $NSYS --version; python3 -c 'import torch;print(torch.__version__)') > $OUT/info.txt 2>&1
P="--trace=cuda,nvtx --sample=none --cpuctxsw=none --capture-range=cudaProfilerApi --capture-range-end=stop"
D="--layers 4 --batch 4 --prompt 256 --steps 12"
$NSYS profile $P -o decode_eager python3 $R/.devwork/decode.py --variant eager $D >> $OUT/info.txt 2>&1
$NSYS export --type sqlite -o decode_eager.sqlite decode_eager.nsys-rep >> $OUT/info.txt 2>&1
python3 $R/.devwork/decode.py --variant eager $D --steps 6 --torch-trace decode_eager_trace.json >> $OUT/info.txt 2>&1
EX=$R/python/gpuopt/example/project/torch
for i in 1 2 3 4 5; do
  for v in original_a faster original_b; do
    f=$EX/original/softmax.py; [ $v = faster ] && f=$EX/candidates/faster/softmax.py
    $NSYS profile $P -o sm_${v}_$i python3 $R/.devwork/softmax_cap.py --impl $f >> $OUT/info.txt 2>&1
    $NSYS export --type sqlite -o sm_${v}_$i.sqlite sm_${v}_$i.nsys-rep >> $OUT/info.txt 2>&1
    python3 $R/.devwork/softmax_cap.py --impl $f --torch-trace sm_${v}_$i.json >> $OUT/info.txt 2>&1
  done
done
ls -la >> $OUT/info.txt
tar cf - *.sqlite *.json | xz -T8 -6 > $OUT/caps1.tar.xz
ls -la $OUT
