// Host side of the simple-style kernels: simple_main MODE, MODE one of builtins, bump, oob,
// trap, syncall, printf, host-deref. Prints PASS / FAIL lines; exit 0 when all passed.
#include "acl/acl.h"
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

void who_am_i_do(uint32_t blockDim, void *stream, int64_t *out);
void bump_do(uint32_t blockDim, void *stream, uint32_t *x);
void write_past_end_do(uint32_t blockDim, void *stream, float *x, uint32_t n);
void stop_here_do(uint32_t blockDim, void *stream);
void two_phase_do(uint32_t blockDim, void *stream, int32_t *pub, int32_t *sums);
void say_do(uint32_t blockDim, void *stream, int value);

static int failed = 0;
static void check(bool ok, const char *what)
{
    std::printf("%s %s\n", ok ? "PASS" : "FAIL", what);
    failed += !ok;
}

int main(int argc, char **argv)
{
    std::string mode = argc > 1 ? argv[1] : "builtins";
    aclInit(nullptr);
    aclrtSetDevice(0);
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);
    if (mode == "builtins") {
        const uint32_t blocks = 5;
        int64_t *d = nullptr;
        aclrtMalloc((void **)&d, blocks * 8 * sizeof(int64_t), ACL_MEM_MALLOC_HUGE_FIRST);
        who_am_i_do(blocks, stream, d);
        check(aclrtSynchronizeStream(stream) == ACL_SUCCESS, "who_am_i ran");
        std::vector<int64_t> h(blocks * 8);
        aclrtMemcpy(h.data(), h.size() * 8, d, h.size() * 8, ACL_MEMCPY_DEVICE_TO_HOST);
        bool ok = true;
        for (uint32_t b = 0; b < blocks; b++) {
            const int64_t *s = &h[b * 8];
            ok = ok && s[0] == b && s[1] == blocks && s[2] == b && s[3] == blocks && s[4] == b &&
                 s[5] == blocks && s[6] == 0 && s[7] == 1;
        }
        check(ok, "block_idx, block_num, get_block_idx/num, GetBlockIdx/Num in every block");
    } else if (mode == "bump") {
        std::vector<uint32_t> h = {10, 20, 30, 40};
        uint32_t *d = nullptr;
        aclrtMalloc((void **)&d, 16, ACL_MEM_MALLOC_HUGE_FIRST);
        aclrtMemcpy(d, 16, h.data(), 16, ACL_MEMCPY_HOST_TO_DEVICE);
        bump_do(4, stream, d);
        bump_do(2, stream, d);
        check(aclrtSynchronizeStream(stream) == ACL_SUCCESS, "bump ran twice");
        aclrtMemcpy(h.data(), 16, d, 16, ACL_MEMCPY_DEVICE_TO_HOST);
        check(h[0] == 12 && h[1] == 22 && h[2] == 31 && h[3] == 41, "x[block_idx] += 1 in stream order");
    } else if (mode == "oob") {
        const uint32_t n = 4096;
        float *d = nullptr;
        aclrtMalloc((void **)&d, n * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST);
        write_past_end_do(4, stream, d, n);
        aclError e = aclrtSynchronizeStream(stream);
        std::printf("sync: %d\nmessage: %s\n", (int)e, aclGetRecentErrMsg());
        check(e == ACL_ERROR_RT_AICORE_EXCEPTION, "a write past the buffer fails the launch with 507015");
        std::vector<float> h(n);
        aclrtMemcpy(h.data(), n * 4, d, n * 4, ACL_MEMCPY_DEVICE_TO_HOST);
        check(h[0] == 1.0f && h[n - 1] == 1.0f, "the writes inside the buffer happened");
        // The device stays usable.
        bump_do(1, stream, (uint32_t *)d);
        check(aclrtSynchronizeStream(stream) == ACL_SUCCESS, "the next launch runs");
    } else if (mode == "trap") {
        stop_here_do(2, stream);
        aclError e = aclrtSynchronizeStream(stream);
        std::printf("sync: %d\nmessage: %s\n", (int)e, aclGetRecentErrMsg());
        check(e == ACL_ERROR_RT_AICORE_EXCEPTION, "asm(\"trap\") fails the launch with 507015");
    } else if (mode == "syncall") {
        const uint32_t blocks = 6;
        int32_t *pub = nullptr, *sums = nullptr;
        aclrtMalloc((void **)&pub, blocks * 4, ACL_MEM_MALLOC_HUGE_FIRST);
        aclrtMalloc((void **)&sums, blocks * 4, ACL_MEM_MALLOC_HUGE_FIRST);
        for (int round = 0; round < 3; round++) {
            aclrtMemset(pub, blocks * 4, 0, blocks * 4);
            two_phase_do(blocks, stream, pub, sums);
        }
        check(aclrtSynchronizeStream(stream) == ACL_SUCCESS, "two_phase ran");
        std::vector<int32_t> h(blocks);
        aclrtMemcpy(h.data(), blocks * 4, sums, blocks * 4, ACL_MEMCPY_DEVICE_TO_HOST);
        bool ok = true;
        for (uint32_t b = 0; b < blocks; b++) {
            ok = ok && h[b] == 210; // 10 + 20 + ... + 60
        }
        check(ok, "SyncAll: every block sees every block's value");
    } else if (mode == "printf") {
        say_do(3, stream, 42);
        check(aclrtSynchronizeStream(stream) == ACL_SUCCESS, "say ran");
    } else if (mode == "host-deref") {
        int *d = nullptr;
        aclrtMalloc((void **)&d, 64, ACL_MEM_MALLOC_HUGE_FIRST);
        std::printf("host writes to device memory at %p\n", (void *)d);
        std::fflush(stdout);
        *(volatile int *)d = 1; // host code must not touch device memory: this traps
        check(false, "host dereference of a device pointer did not trap");
    }
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    return failed == 0 ? 0 : 1;
}
