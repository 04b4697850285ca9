/* npuemu::run_block as the generated launch code calls it (kernel contract §3), with canonical
 * device addresses that differ from the host alias (as under libascendcl): the kernel computes on
 * the alias through GlobalTensor, faults carry the canonical address, the message is truncated to
 * errlen, other exceptions become messages too, and the block context ends with the block. */
#include <stdexcept>

#include "add_custom_tiling.h"
#include "host_f16.h"
#include "kernel_operator.h"
#include "npuemu/launch.h"

extern "C" __global__ __aicore__ void add_custom_tiling(GM_ADDR x, GM_ADDR y, GM_ADDR z, AddCustomTilingData tiling);

static void throws_runtime_error() { throw std::runtime_error("boom"); }

int main()
{
    const uint32_t n = 3000, blocks = 7;
    static uint16_t hx[n], hy[n], hz[n];
    fill_f16(hx, n, 7, 50.0f);
    fill_f16(hy, n, 8, 50.0f);
    const uint64_t base = 0x12340000000ull; /* canonical addresses: never dereferenced */
    npuemu_gm_region regions[3] = {
        {base, sizeof hx, hx, "x"}, {base + 0x100000, sizeof hy, hy, "y"}, {base + 0x200000, sizeof hz, hz, "z"}};
    AddCustomTilingData t = AddCustomTiling(n, blocks, 256);
    char err[512];
    for (uint32_t i = 0; i < blocks; ++i) {
        int rc = npuemu::run_block("add_custom_tiling", regions, 3, i, blocks, err, sizeof err, [&] {
            add_custom_tiling((GM_ADDR)base, (GM_ADDR)(base + 0x100000), (GM_ADDR)(base + 0x200000), t);
        });
        if (rc != 0) {
            std::fprintf(stderr, "block %u failed: %s\n", i, err);
            return 1;
        }
    }
    if (check_f16("run_block add", hz, n, [&](size_t i) { return f16_val(hx, i) + f16_val(hy, i); })) {
        return 1;
    }
    std::printf("computed through the alias: ok\n");

    /* out of bounds: the whole tensor is 2 elements past y's end */
    int rc = npuemu::run_block("oob", regions, 3, 2, 4, err, sizeof err, [&] {
        AscendC::GlobalTensor<half> g;
        g.SetGlobalBuffer((__gm__ half *)(base + 0x100000), n + 2);
        (void)g.GetValue(n + 1);
    });
    std::printf("fault rc=%d: %s\n", rc, err);
    char small[24];
    rc = npuemu::run_block("oob", regions, 3, 0, 1, small, sizeof small, [&] {
        AscendC::GlobalTensor<half> g;
        g.SetGlobalBuffer((__gm__ half *)8, 1);
        g.SetValue(0, half(1));
    });
    std::printf("truncated rc=%d: [%s] len %zu\n", rc, small, std::strlen(small));
    rc = npuemu::run_block("thrower", regions, 3, 1, 2, err, sizeof err, [&] { throws_runtime_error(); });
    std::printf("exception rc=%d: %s\n", rc, err);
    try {
        (void)AscendC::GetBlockIdx();
        std::printf("context leaked\n");
    } catch (const npuemu::KernelFault &f) {
        std::printf("after the block: %s\n", f.what());
    }
    return 0;
}
