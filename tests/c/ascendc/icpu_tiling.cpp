/* Op-project tiling in kernel code, from the Ascend C reference (Kernel Tiling, CPU孪生调试):
 * the host fills a TilingData declared with BEGIN_TILING_DATA_DEF and registered with
 * REGISTER_TILING_DATA_CLASS, serialises it with SaveToBuffer; the kernel reads it with
 * GET_TILING_DATA / GET_TILING_DATA_WITH_STRUCT / GET_TILING_DATA_MEMBER and branches on
 * TILING_KEY_IS / TILING_KEY_LIST, the key set with ICPU_SET_TILING_KEY. */
#include "tikicpulib.h"

#include <cstdio>
#include <cstring>

#include "tiling_demo_tiling.h"

struct SpecialTiling {
    uint32_t totalLength;
    uint32_t tileNum;
    float scale;
    int32_t offset;
};

/* out[i] (float) for i < totalLength: key 1: i * scale; key 2, 3: i * scale + offset (special
 * struct); key 4: tileNum (GET_TILING_DATA_MEMBER); otherwise -1. */
extern "C" __global__ __aicore__ void tiling_demo(GM_ADDR out, GM_ADDR tiling)
{
    __gm__ float *o = (__gm__ float *)out;
    if (TILING_KEY_IS(1)) {
        GET_TILING_DATA(t, tiling);
        for (uint32_t i = block_idx; i < t.totalLength; i += block_num) {
            o[i] = (float)i * t.scale;
        }
    } else if (TILING_KEY_LIST(2, 3)) {
        GET_TILING_DATA_WITH_STRUCT(SpecialTiling, t, tiling);
        for (uint32_t i = block_idx; i < t.totalLength; i += block_num) {
            o[i] = (float)i * t.scale + (float)t.offset;
        }
    } else if (TILING_KEY_IS(4)) {
        GET_TILING_DATA_MEMBER(optiling::DemoTilingData, tileNum, n, tiling);
        if (block_idx == 0) {
            o[0] = (float)n;
        }
    } else if (block_idx == 0) {
        o[0] = -1.0f;
    }
}

static int failures = 0;

static void check(const char *what, bool ok)
{
    std::printf("%s %s\n", ok ? "PASS" : "FAIL", what);
    failures += !ok;
}

int main()
{
    const uint32_t n = 100;
    float *out = (float *)AscendC::GmAlloc(n * sizeof(float));

    optiling::DemoTilingData td;
    td.set_totalLength(n);
    td.set_tileNum(7);
    td.set_scale(0.5f);
    uint8_t *tiling = (uint8_t *)AscendC::GmAlloc(td.GetDataSize());
    td.SaveToBuffer(tiling, td.GetDataSize());
    check("GetDataSize is the packed field size", td.GetDataSize() == 12);

    ICPU_SET_TILING_KEY(1);
    ICPU_RUN_KF(tiling_demo, 4, (GM_ADDR)out, (GM_ADDR)tiling);
    bool ok = true;
    for (uint32_t i = 0; i < n; i++) {
        ok = ok && out[i] == (float)i * 0.5f;
    }
    check("GET_TILING_DATA under TILING_KEY_IS(1)", ok);

    SpecialTiling st{n, 3, 2.0f, -10};
    uint8_t *special = (uint8_t *)AscendC::GmAlloc(sizeof st);
    std::memcpy(special, &st, sizeof st);
    for (uint64_t key : {2, 3}) {
        std::memset(out, 0, n * sizeof(float));
        ICPU_SET_TILING_KEY(key);
        ICPU_RUN_KF(tiling_demo, 3, (GM_ADDR)out, (GM_ADDR)special);
        ok = true;
        for (uint32_t i = 0; i < n; i++) {
            ok = ok && out[i] == (float)i * 2.0f - 10.0f;
        }
        check(key == 2 ? "GET_TILING_DATA_WITH_STRUCT under TILING_KEY_LIST(2, 3), key 2"
                       : "GET_TILING_DATA_WITH_STRUCT under TILING_KEY_LIST(2, 3), key 3",
              ok);
    }

    ICPU_SET_TILING_KEY(4);
    ICPU_RUN_KF(tiling_demo, 2, (GM_ADDR)out, (GM_ADDR)tiling);
    check("GET_TILING_DATA_MEMBER", out[0] == 7.0f);

    ICPU_SET_TILING_KEY(9);
    ICPU_RUN_KF(tiling_demo, 2, (GM_ADDR)out, (GM_ADDR)tiling);
    check("no branch for key 9", out[0] == -1.0f);

    AscendC::GmFree(out);
    AscendC::GmFree(tiling);
    AscendC::GmFree(special);
    std::printf("%d failures\n", failures);
    return failures;
}
