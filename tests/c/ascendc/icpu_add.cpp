/* CPU-debug path of the vendor AddCustom sample: GmAlloc + ICPU_RUN_KF, 8 blocks x 2048 fp16. */
#include "tikicpulib.h"

#include "host_f16.h"

extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z);

int main()
{
    const size_t n = 8 * 2048, bytes = n * sizeof(uint16_t);
    uint8_t *x = (uint8_t *)AscendC::GmAlloc(bytes);
    uint8_t *y = (uint8_t *)AscendC::GmAlloc(bytes);
    uint8_t *z = (uint8_t *)AscendC::GmAlloc(bytes);
    fill_f16(x, n, 1, 100.0f);
    fill_f16(y, n, 2, 100.0f);
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(add_custom, 8, x, y, z);
    int rc = check_f16("add_custom", z, n, [&](size_t i) { return f16_val(x, i) + f16_val(y, i); });
    AscendC::GmFree((void *)x);
    AscendC::GmFree((void *)y);
    AscendC::GmFree((void *)z);
    if (rc == 0) {
        std::printf("add_custom: PASS (%zu fp16 elements, 8 blocks)\n", n);
    }
    return rc;
}
