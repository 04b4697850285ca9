/* Host side of raw_deref.cpp (tests/tests/kernel_launch.rs):
 *   raw      launch raw_deref on one block: the process must die of SIGSEGV
 *   null     launch null_deref on two blocks: SIGSEGV too, the message naming block 1/2
 *   scalar   launch no_params on 100 blocks, set_first (pointer + scalar parameters) on 6
 *            blocks, and check z */
#include <cstdio>
#include <cstring>
#include <vector>

#include "acl/acl.h"
#include "aclrtlaunch_no_params.h"
#include "aclrtlaunch_null_deref.h"
#include "aclrtlaunch_raw_deref.h"
#include "aclrtlaunch_set_first.h"
#include "common.h"

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "scalar";
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    aclrtStream s;
    CHECK(aclrtCreateStream(&s));
    void *d;
    const uint32_t part = 10, blocks = 6;
    CHECK(aclrtMalloc(&d, part * blocks * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST));
    CHECK(aclrtMemset(d, part * blocks * sizeof(float), 0, part * blocks * sizeof(float)));
    if (!std::strcmp(mode, "raw")) {
        CHECK(ACLRT_LAUNCH_KERNEL(raw_deref)(1, s, d));
        aclError e = aclrtSynchronizeStream(s);
        std::printf("raw_deref survived: %d\n", (int)e);
        return 3;
    }
    if (!std::strcmp(mode, "null")) {
        CHECK(ACLRT_LAUNCH_KERNEL(null_deref)(2, s, d, 0));
        aclError e = aclrtSynchronizeStream(s);
        std::printf("null_deref survived: %d\n", (int)e);
        return 3;
    }
    CHECK(ACLRT_LAUNCH_KERNEL(no_params)(100, s));
    CHECK(ACLRT_LAUNCH_KERNEL(set_first)(blocks, s, d, part, 2.5f));
    CHECK(aclrtSynchronizeStream(s));
    std::vector<float> h(part * blocks);
    CHECK(aclrtMemcpy(h.data(), h.size() * 4, d, h.size() * 4, ACL_MEMCPY_DEVICE_TO_HOST));
    for (uint32_t i = 0; i < part * blocks; i++) {
        float want = i % part == 0 ? 2.5f + (float)(i / part) : 0.0f;
        if (h[i] != want) {
            std::printf("z[%u] = %g, expected %g: FAIL\n", i, h[i], want);
            return 1;
        }
    }
    CHECK(aclrtFree(d));
    CHECK(aclrtDestroyStream(s));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    std::printf("PASS\n");
    return 0;
}
