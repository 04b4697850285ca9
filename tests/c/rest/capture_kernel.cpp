/* A small Ascend C kernel for the capture tests: y[i] = x[i] + 1 (float), blocks stride over
 * the elements. */
#include "kernel_operator.h"

extern "C" __global__ __aicore__ void add_one(GM_ADDR x, GM_ADDR y, uint32_t n)
{
    AscendC::GlobalTensor<float> xg;
    AscendC::GlobalTensor<float> yg;
    xg.SetGlobalBuffer((__gm__ float *)x, n);
    yg.SetGlobalBuffer((__gm__ float *)y, n);
    for (uint32_t i = AscendC::GetBlockIdx(); i < n; i += AscendC::GetBlockNum()) {
        yg.SetValue(i, xg.GetValue(i) + 1.0f);
    }
}
