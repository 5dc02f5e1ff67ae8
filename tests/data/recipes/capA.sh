# Device run A (wave 3): repeated decode captures, eager and CUDA-graph (torch.compile reduce-overhead),
# under nsys (graph-level trace) and torch.profiler (record_shapes), 6 decode steps each, one process each.
set -u
R=$PWD; W=/tmp/w; mkdir -p $W $OUT; cd $W
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
NSYS=/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys
mkdir -p /tmp/dw; for f in $R/.devwork/debs/*.deb; do dpkg -x $f /tmp/dw; done
export LD_LIBRARY_PATH=/tmp/dw/usr/lib/x86_64-linux-gnu:/tmp/dw/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export TORCHINDUCTOR_CACHE_DIR=/tmp/ind TRITON_CACHE_DIR=/tmp/tri
(nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; $NSYS --version; python3 -c 'import torch;print(torch.__version__, torch.version.cuda)'; nproc) > $OUT/info.txt 2>&1
P="--trace=cuda,nvtx --sample=none --cpuctxsw=none --capture-range=cudaProfilerApi --capture-range-end=stop --cuda-graph-trace=graph"
D="--layers 4 --batch 4 --prompt 256 --steps 6"
cap() { # variant tag i
  s=$(el)
  $NSYS profile $P -o $2n_$3 python3 $R/.devwork/decode.py --variant $1 $D > $2n_$3.log 2>&1
  $NSYS export --type sqlite -o $2n_$3.sqlite $2n_$3.nsys-rep >> $2n_$3.log 2>&1
  m=$(el)
  python3 $R/.devwork/decode.py --variant $1 $D --torch-trace $2t_$3.json > $2t_$3.log 2>&1
  echo "$1 $3 nsys $((m-s)) s torch $(( $(el)-m )) s at $(el) (wall $(date +%s.%N))" >> $OUT/info.txt
}
# The first compile fills the inductor cache while eager captures run (its GPU work is a few steps at the
# end; warm.log and the capture lines carry wall times to tell whether any overlapped).
(echo "warm start $(date +%s.%N)"; python3 $R/.devwork/decode.py --variant compiled $D; echo "warm end $(date +%s.%N)") > warm.log 2>&1 &
for i in 1 2 3 4 5 6 7 8; do [ $(el) -gt ${EAGER_S:-200} ] && break; cap eager e $i; done
wait
for i in 1 2 3 4 5 6; do [ $(el) -gt ${GRAPH_S:-350} ] && break; cap compiled g $i; done
cat warm.log >> $OUT/info.txt; ls -la >> $OUT/info.txt
tar cf - *.sqlite *.json *.log 2>/dev/null | xz -T16 -6 > $OUT/capA.tar.xz
ls -la $OUT; tail -30 $OUT/info.txt
