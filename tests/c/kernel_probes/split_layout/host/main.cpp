/* Host of the split-layout probe: passes the tiling struct's address, as the generated
 * aclrtlaunch_scale_custom.h declares it for a struct parameter. */
#include "acl/acl.h"
#include "scale_tiling.h"
#include "aclrtlaunch_scale_custom.h"
#include <cstdio>

int main()
{
    const uint32_t blockDim = 4, n = 64, total = blockDim * n;
    float x[total], y[total];
    for (uint32_t i = 0; i < total; i++) {
        x[i] = (float)i - 100.0f;
    }
    aclInit(nullptr);
    aclrtSetDevice(0);
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);
    void *xd = nullptr, *yd = nullptr;
    aclrtMalloc(&xd, sizeof x, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc(&yd, sizeof y, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(xd, sizeof x, x, sizeof x, ACL_MEMCPY_HOST_TO_DEVICE);
    ScaleTiling tiling{n, 0.25f};
    uint32_t launch = ACLRT_LAUNCH_KERNEL(scale_custom)(blockDim, stream, xd, yd, &tiling);
    aclError sync = aclrtSynchronizeStream(stream);
    aclrtMemcpy(y, sizeof y, yd, sizeof y, ACL_MEMCPY_DEVICE_TO_HOST);
    int bad = 0;
    for (uint32_t i = 0; i < total; i++) {
        bad += y[i] != x[i] * 0.25f;
    }
    aclrtFree(xd);
    aclrtFree(yd);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    std::printf("launch %u, synchronize %d, %d wrong\n", launch, (int)sync, bad);
    std::printf(launch == 0 && sync == ACL_SUCCESS && bad == 0 ? "PASS\n" : "FAIL\n");
    return launch == 0 && sync == ACL_SUCCESS && bad == 0 ? 0 : 1;
}
