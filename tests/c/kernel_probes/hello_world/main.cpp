/* Host of the HelloWorld probe: 8 blocks on one stream, nothing else. */
#include "acl/acl.h"
#include <cstdio>

extern void hello_world_do(uint32_t coreDim, void *stream);

int32_t main(int argc, char const *argv[])
{
    (void)argc;
    (void)argv;
    aclInit(nullptr);
    int32_t deviceId = 0;
    aclrtSetDevice(deviceId);
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);
    constexpr uint32_t blockDim = 8;
    hello_world_do(blockDim, stream);
    aclError ret = aclrtSynchronizeStream(stream);
    aclrtDestroyStream(stream);
    aclrtResetDevice(deviceId);
    aclFinalize();
    std::printf("synchronize: %d\n", (int)ret);
    return ret == ACL_SUCCESS ? 0 : 1;
}
