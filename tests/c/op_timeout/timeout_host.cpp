/* aclrtSetOpExecuteTimeOutV2 bounds a kernel's run: a launch that runs longer than the
 * timeout fails its stream with ACL_ERROR_RT_AICORE_TIMEOUT at the next synchronize (the
 * emulator checks when the kernel returns); without a timeout the same launch succeeds.
 * Prints "op_timeout passed". */
#include "acl/acl.h"
#include "aclrtlaunch_spin.h"
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define CHECK(x)                                                                                 \
    do {                                                                                         \
        aclError r_ = (x);                                                                       \
        if (r_ != ACL_SUCCESS) {                                                                 \
            std::printf("FAIL %s:%d: %s = %d (%s)\n", __FILE__, __LINE__, #x, r_, aclGetRecentErrMsg()); \
            std::exit(1);                                                                        \
        }                                                                                        \
    } while (0)

int main()
{
    CHECK(aclInit(nullptr));
    CHECK(aclrtSetDevice(0));
    aclrtStream s;
    CHECK(aclrtCreateStream(&s));
    void *out = nullptr;
    CHECK(aclrtMalloc(&out, 32, ACL_MEM_MALLOC_HUGE_FIRST));
    const uint32_t iters = 400u * 1000u * 1000u; // well over a millisecond on any CPU

    uint64_t actual = 0;
    CHECK(aclrtSetOpExecuteTimeOutV2(1000, &actual)); // 1 ms
    std::printf("timeout %llu us\n", (unsigned long long)actual);
    CHECK((aclError)ACLRT_LAUNCH_KERNEL(spin)(1, s, out, iters));
    aclError e = aclrtSynchronizeStream(s);
    const char *m = aclGetRecentErrMsg();
    std::printf("synchronize with a 1 ms timeout: %d [%s]\n", e, m ? m : "");
    if (e != ACL_ERROR_RT_AICORE_TIMEOUT || !m || !std::strstr(m, "longer than the operator execution timeout")) {
        std::printf("FAIL: expected ACL_ERROR_RT_AICORE_TIMEOUT naming the timeout\n");
        return 1;
    }
    CHECK(aclrtDestroyStream(s));

    CHECK(aclrtSetOpExecuteTimeOutV2(0, &actual)); // the maximum: never
    CHECK(aclrtCreateStream(&s));
    CHECK((aclError)ACLRT_LAUNCH_KERNEL(spin)(1, s, out, iters));
    CHECK(aclrtSynchronizeStream(s));
    CHECK(aclrtDestroyStream(s));
    CHECK(aclrtFree(out));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    std::printf("op_timeout passed\n");
    return 0;
}
