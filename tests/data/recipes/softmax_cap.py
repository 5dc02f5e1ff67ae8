"""One capture of the gpuopt example's torch softmax (original or faster candidate), as its driver runs it:
case rows256 (256x4096 float32, seed 7), 3 warm-ups, then a measured region of --reps timed runs inside
cudaProfilerStart/Stop and an NVTX range 'measure' (--torch-trace: a Kineto trace of that region)."""
import argparse, importlib.util, json, sys, time
import torch

ap = argparse.ArgumentParser()
ap.add_argument("--impl", required=True)
ap.add_argument("--reps", type=int, default=2)
ap.add_argument("--torch-trace", default=None)
a = ap.parse_args()
spec = importlib.util.spec_from_file_location("impl", a.impl)
impl = importlib.util.module_from_spec(spec); spec.loader.exec_module(impl)
g = torch.Generator(device="cuda").manual_seed(7)
x = torch.randn(256, 4096, generator=g, device="cuda", dtype=torch.float32)
ref = torch.softmax(x.double(), dim=-1)
for _ in range(3):
    impl.run(x)
torch.cuda.synchronize()
prof = None
if a.torch_trace:
    prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA])
    prof.__enter__()
torch.cuda.profiler.start()
times = []
for _ in range(a.reps):
    torch.cuda.nvtx.range_push("measure")
    with torch.profiler.record_function("measure"):
        t0 = time.perf_counter()
        out = impl.run(x)
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    torch.cuda.nvtx.range_pop()
torch.cuda.profiler.stop()
if prof is not None:
    prof.__exit__(None, None, None); prof.export_chrome_trace(a.torch_trace)
err = float((out.double() - ref).abs().max().item())
print(json.dumps({"impl": a.impl, "ms": times, "max_abs_error": err}))
