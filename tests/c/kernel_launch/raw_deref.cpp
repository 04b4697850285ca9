/* Kernels that break the rules, for tests/tests/kernel_launch.rs.
 * raw_deref reads global memory through the raw GM_ADDR pointer instead of a GlobalTensor:
 * the canonical device address is not host-accessible, so the AI-core thread faults and the
 * process dies of SIGSEGV with a message naming the kernel and the block.
 * set_first writes value into z[0] of every block's part through GlobalTensor::SetValue,
 * taking only scalars besides the pointer (a launch with a scalar parameter). */
#include "kernel_operator.h"

extern "C" __global__ __aicore__ void raw_deref(GM_ADDR x)
{
    volatile uint8_t v = *((__gm__ uint8_t *)x + 3);
    (void)v;
}

/* null_deref (block 1 of 2 only) dereferences a null pointer: not device memory, so the
 * message says which kernel block crashed and the process dies of SIGSEGV. */
extern "C" __global__ __aicore__ void null_deref(GM_ADDR x, uint64_t zero)
{
    (void)x;
    if (AscendC::GetBlockIdx() == 1) {
        volatile uint32_t *p = reinterpret_cast<volatile uint32_t *>(zero);
        *p = 1;
    }
}

/* Parameter names a and p: the generated launch code must not shadow them. */
extern "C" __global__ __aicore__ void set_first(GM_ADDR a, uint32_t part, float p)
{
    AscendC::GlobalTensor<float> zGm;
    zGm.SetGlobalBuffer((__gm__ float *)a + part * AscendC::GetBlockIdx(), part);
    zGm.SetValue(0, p + static_cast<float>(AscendC::GetBlockIdx()));
}

/* A kernel without parameters (its launch has no regions and an empty argument block). */
extern "C" __global__ __aicore__ void no_params(void)
{
    (void)AscendC::GetBlockNum();
}
