// A float kernel whose transcendentals and division go to the special-function unit (MUFU) when built
// with -use_fast_math: expf -> MUFU.EX2, logf -> MUFU.LG2, sinf/cosf -> MUFU.SIN/COS, rsqrtf -> MUFU.RSQ,
// float division -> MUFU.RCP. No integer division or modulo.
extern "C" __global__ void fast_math_sfu(const float* __restrict__ x, float* __restrict__ y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        float sigmoid = 1.0f / (1.0f + expf(-1.702f * v));
        y[i] = v * sigmoid + sinf(v) * cosf(v) + rsqrtf(fabsf(v) + 1.0f) + logf(1.0f + fabsf(v));
    }
}
