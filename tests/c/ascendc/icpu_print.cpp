/* AscendC::printf / PRINTF from two blocks: every conversion takes its length from the argument. */
#include "tikicpulib.h"

extern "C" __global__ __aicore__ void print_kernel(GM_ADDR x)
{
    (void)x;
    int64_t big = 1LL << 40;
    uint8_t u8 = 200;
    half h = 1.5f;
    bool b = true;
    AscendC::printf("block %d of %ld: %lld %u %f %x %s %d%%\n", (int32_t)AscendC::GetBlockIdx(), AscendC::GetBlockNum(),
                    big, u8, h, 255u, "str", b);
    AscendC::PRINTF("%5.2f|%-4d|\n", 3.14159f, 7);
}

int main()
{
    uint8_t *x = (uint8_t *)AscendC::GmAlloc(64);
    ICPU_RUN_KF(print_kernel, 2, x);
    AscendC::GmFree(x);
    return 0;
}
