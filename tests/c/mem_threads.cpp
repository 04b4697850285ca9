// C++: several threads allocate, copy and check on two devices at once; error messages are
// per thread.
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>
#include <atomic>
#include "acl/acl.h"

static std::atomic<int> failures{0};

#define T_CHECK(cond)                                                                   \
    do {                                                                                \
        if (!(cond)) {                                                                  \
            std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                                 \
            return;                                                                     \
        }                                                                               \
    } while (0)

static void worker(int id)
{
    T_CHECK(aclrtSetDevice(id % 2) == ACL_SUCCESS);
    const size_t n = 100000 + id * 7;
    std::vector<unsigned char> in(n), out(n);
    for (int round = 0; round < 20; round++) {
        for (size_t i = 0; i < n; i++) in[i] = static_cast<unsigned char>(i * 7 + id * 31 + round);
        void *a = nullptr, *b = nullptr;
        T_CHECK(aclrtMalloc(&a, n, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS);
        T_CHECK(aclrtMalloc(&b, n, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS);
        T_CHECK(aclrtMemcpy(a, n, in.data(), n, ACL_MEMCPY_HOST_TO_DEVICE) == ACL_SUCCESS);
        T_CHECK(aclrtMemcpy(b, n, a, n, ACL_MEMCPY_DEVICE_TO_DEVICE) == ACL_SUCCESS);
        std::fill(out.begin(), out.end(), 0);
        T_CHECK(aclrtMemcpy(out.data(), n, b, n, ACL_MEMCPY_DEVICE_TO_HOST) == ACL_SUCCESS);
        T_CHECK(out == in);
        T_CHECK(aclrtFree(a) == ACL_SUCCESS);
        T_CHECK(aclrtFree(b) == ACL_SUCCESS);
    }
    if (id == 0) {
        // This thread's error message is its own.
        T_CHECK(aclrtMalloc(nullptr, 1, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_ERROR_INVALID_PARAM);
        const char *m = aclGetRecentErrMsg();
        T_CHECK(m != nullptr && std::string(m).find("devPtr is NULL") != std::string::npos);
    }
}

int main()
{
    if (aclInit(nullptr) != ACL_SUCCESS) return 1;
    std::vector<std::thread> ts;
    for (int i = 0; i < 6; i++) ts.emplace_back(worker, i);
    for (auto &t : ts) t.join();
    // The main thread made no failing call: no message from the workers leaks here.
    const char *m = aclGetRecentErrMsg();
    if (m != nullptr && std::strstr(m, "devPtr is NULL")) {
        std::fprintf(stderr, "worker error message leaked into the main thread: %s\n", m);
        return 1;
    }
    if (failures != 0) return 1;
    aclFinalize();
    std::printf("threads ok\n");
    return 0;
}
