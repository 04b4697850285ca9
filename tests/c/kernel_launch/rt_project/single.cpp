// A binary with one kernel, for aclrtBinaryGetFunctionByEntry: the entry is the tiling key.
#include "kernel_operator.h"

extern "C" __global__ __aicore__ void keyed(GM_ADDR out)
{
    __gm__ int32_t *o = (__gm__ int32_t *)out;
    if (TILING_KEY_IS(1)) {
        o[block_idx] = 100 + block_idx;
    } else if (TILING_KEY_IS(2)) {
        o[block_idx] = 200 + block_idx;
    } else {
        o[block_idx] = -1;
    }
}
