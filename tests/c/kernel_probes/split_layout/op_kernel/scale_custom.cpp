/* y = x * scale over float data, the tiling struct passed by value; its header lives in
 * ../include, which the build names with ascendc_include_directories. */
#include "kernel_operator.h"
#include "scale_tiling.h"

extern "C" __global__ __aicore__ void scale_custom(GM_ADDR x, GM_ADDR y, ScaleTiling tiling)
{
    uint32_t n = tiling.blockLength;
    AscendC::GlobalTensor<float> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ float *)x + n * AscendC::GetBlockIdx(), n);
    yGm.SetGlobalBuffer((__gm__ float *)y + n * AscendC::GetBlockIdx(), n);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, n * sizeof(float));
    AscendC::LocalTensor<float> t = buf.Get<float>();
    AscendC::DataCopy(t, xGm, n);
    AscendC::Muls(t, t, tiling.scale, n);
    AscendC::DataCopy(yGm, t, n);
}
