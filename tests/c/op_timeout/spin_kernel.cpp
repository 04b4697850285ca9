/* A kernel that runs for a while: `iters` rounds of scalar arithmetic, the result written to
 * out[0] (so the loop is not optimised away). For the operator execution timeout test. */
#include "kernel_operator.h"

extern "C" __global__ __aicore__ void spin(GM_ADDR out, uint32_t iters)
{
    AscendC::GlobalTensor<uint32_t> o;
    o.SetGlobalBuffer((__gm__ uint32_t *)out, 8);
    uint32_t acc = 1;
    for (uint32_t i = 0; i < iters; i++) {
        acc = acc * 1664525u + 1013904223u;
        if ((i & 0xFFFFu) == 0) {
            o.SetValue(0, acc);
        }
    }
    o.SetValue(0, acc);
}
