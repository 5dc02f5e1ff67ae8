"""The bundled example: a small real workload and the whole evaluation loop on it (``gpuopt example run``).

``project/numpy``: a layer normalization in numpy (a per-row loop) with a correctness check, one clearly
faster candidate (vectorized), one wrong candidate (normalizes the wrong axis), one with no real effect (a
rename) and its driver. ``project/torch``: the same shape of example on a CUDA GPU with torch.
"""
