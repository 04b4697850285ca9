/* Kernels of the kernel-launch benchmark (kernel_launch.cpp): tiny work per block, so a
 * launch's time is the runtime's overhead. */
#include "kernel_operator.h"

/* Floats per block of bench_tiny_add. */
constexpr int32_t TINY = 16;

/* z = x + y on TINY floats per block (block b handles elements [b*TINY, (b+1)*TINY)). */
extern "C" __global__ __aicore__ void bench_tiny_add(GM_ADDR x, GM_ADDR y, GM_ADDR z)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    const int64_t off = static_cast<int64_t>(TINY) * AscendC::GetBlockIdx();
    AscendC::GlobalTensor<float> xg, yg, zg;
    xg.SetGlobalBuffer((__gm__ float *)x + off, TINY);
    yg.SetGlobalBuffer((__gm__ float *)y + off, TINY);
    zg.SetGlobalBuffer((__gm__ float *)z + off, TINY);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 3 * TINY * sizeof(float));
    AscendC::LocalTensor<float> a = buf.GetWithOffset<float>(TINY, 0);
    AscendC::LocalTensor<float> b = buf.GetWithOffset<float>(TINY, TINY * sizeof(float));
    AscendC::LocalTensor<float> c = buf.GetWithOffset<float>(TINY, 2 * TINY * sizeof(float));
    AscendC::DataCopy(a, xg, TINY);
    AscendC::DataCopy(b, yg, TINY);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::Add(c, a, b, TINY);
    AscendC::PipeBarrier<PIPE_ALL>();
    AscendC::DataCopy(zg, c, TINY);
}

/* Does nothing: the launch itself. */
extern "C" __global__ __aicore__ void bench_empty(GM_ADDR x)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    (void)x;
}
