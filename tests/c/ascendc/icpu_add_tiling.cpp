/* CPU-debug path of the tiling AddCustom variant: icpu_add_tiling TOTAL BLOCKDIM TILE.
 * z = x + y over TOTAL fp16 elements; GM buffers are exactly TOTAL elements, so any access past
 * the end is a fault. */
#include "tikicpulib.h"

#include "add_custom_tiling.h"
#include "host_f16.h"

extern "C" __global__ __aicore__ void add_custom_tiling(GM_ADDR x, GM_ADDR y, GM_ADDR z, AddCustomTilingData tiling);

int main(int argc, char **argv)
{
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s TOTAL BLOCKDIM TILE\n", argv[0]);
        return 2;
    }
    const uint32_t total = static_cast<uint32_t>(std::strtoul(argv[1], nullptr, 0));
    const uint32_t blockDim = static_cast<uint32_t>(std::strtoul(argv[2], nullptr, 0));
    const uint32_t tile = static_cast<uint32_t>(std::strtoul(argv[3], nullptr, 0));
    const size_t bytes = static_cast<size_t>(total) * sizeof(uint16_t);
    uint8_t *x = (uint8_t *)AscendC::GmAlloc(bytes);
    uint8_t *y = (uint8_t *)AscendC::GmAlloc(bytes);
    uint8_t *z = (uint8_t *)AscendC::GmAlloc(bytes);
    fill_f16(x, total, 3, 1000.0f);
    fill_f16(y, total, 4, 10.0f);
    AddCustomTilingData tiling = AddCustomTiling(total, blockDim, tile);
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    ICPU_RUN_KF(add_custom_tiling, blockDim, x, y, z, tiling);
    int rc = check_f16("add_custom_tiling", z, total, [&](size_t i) { return f16_val(x, i) + f16_val(y, i); });
    AscendC::GmFree((void *)x);
    AscendC::GmFree((void *)y);
    AscendC::GmFree((void *)z);
    if (rc == 0) {
        std::printf("add_custom_tiling: PASS (%u fp16 elements, %u blocks, tile %u)\n", total, blockDim, tile);
    }
    return rc;
}
