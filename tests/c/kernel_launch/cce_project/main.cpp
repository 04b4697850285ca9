// Host program of the CCE project: launches add_i32 through the kernel library's wrapper.
#include "acl/acl.h"
#include <cstdint>
#include <cstdio>
#include <vector>

void add_i32_do(uint32_t blockDim, void *l2ctrl, void *stream, uint8_t *x, uint8_t *y, uint8_t *z,
                uint32_t perBlock);

int main()
{
    const uint32_t blocks = 8, perBlock = 4096, n = blocks * perBlock;
    std::vector<int32_t> x(n), y(n), z(n);
    for (uint32_t i = 0; i < n; i++) {
        x[i] = (int32_t)i * 3 - 1000;
        y[i] = 7 - (int32_t)(i % 1000);
    }
    if (aclInit(nullptr) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) {
        std::printf("init failed\n");
        return 1;
    }
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);
    uint8_t *dx, *dy, *dz;
    const size_t bytes = n * sizeof(int32_t);
    aclrtMalloc((void **)&dx, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void **)&dy, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void **)&dz, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(dx, bytes, x.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE);
    aclrtMemcpy(dy, bytes, y.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE);
    add_i32_do(blocks, nullptr, stream, dx, dy, dz, perBlock);
    aclError rc = aclrtSynchronizeStream(stream);
    aclrtMemcpy(z.data(), bytes, dz, bytes, ACL_MEMCPY_DEVICE_TO_HOST);
    int bad = 0;
    for (uint32_t i = 0; i < n; i++) {
        bad += z[i] != x[i] + y[i];
    }
    aclrtFree(dx);
    aclrtFree(dy);
    aclrtFree(dz);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    std::printf("sync %d, %d wrong of %u\n%s\n", (int)rc, bad, n, rc == 0 && bad == 0 ? "PASS" : "FAIL");
    return rc == 0 && bad == 0 ? 0 : 1;
}
