// C++: contexts per thread and streams on several devices ordered by events across threads.
// Eight threads each set their own device (thread i on device i % count), check that the
// current device is per thread, and build a chain: thread i's stream waits on the event
// thread i-1 recorded, then appends i to a shared log. The log must come out 0..7.
#include <atomic>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>
#include "common.h"

namespace {
constexpr int kThreads = 8;
std::mutex g_mu;
std::vector<int> g_log;
aclrtEvent g_events[kThreads];
std::atomic<int> g_recorded{0};  // how many threads have issued their record
std::atomic<bool> g_go{false};

void append(void *arg) {
    std::lock_guard<std::mutex> l(g_mu);
    g_log.push_back(static_cast<int>(reinterpret_cast<intptr_t>(arg)));
}
void gate(void *) {
    while (!g_go.load()) std::this_thread::yield();
}

void worker(int i, uint32_t count, std::atomic<int> *fails) {
    auto fail = [&](const char *what, aclError e) {
        std::fprintf(stderr, "thread %d: %s -> %d: %s\n", i, what, e, test_msg());
        fails->fetch_add(1);
    };
    int32_t dev = static_cast<int32_t>(i % static_cast<int>(count));
    aclError e = aclrtSetDevice(dev);
    if (e != ACL_SUCCESS) return fail("aclrtSetDevice", e);
    aclrtStream s = nullptr;
    if ((e = aclrtCreateStream(&s)) != ACL_SUCCESS) return fail("aclrtCreateStream", e);
    if (i == 0) {
        if ((e = aclrtLaunchHostFunc(s, gate, nullptr)) != ACL_SUCCESS) return fail("gate", e);
    } else {
        // Wait until thread i-1 has issued its record, then make our stream wait on it.
        while (g_recorded.load() < i) std::this_thread::yield();
        if ((e = aclrtStreamWaitEvent(s, g_events[i - 1])) != ACL_SUCCESS) return fail("wait", e);
    }
    if ((e = aclrtLaunchHostFunc(s, append, reinterpret_cast<void *>(static_cast<intptr_t>(i)))) != ACL_SUCCESS)
        return fail("append", e);
    if ((e = aclrtRecordEvent(g_events[i], s)) != ACL_SUCCESS) return fail("record", e);
    g_recorded.fetch_add(1);
    int32_t got = -1;
    if ((e = aclrtGetDevice(&got)) != ACL_SUCCESS || got != dev) return fail("aclrtGetDevice", e);
    if (i == kThreads - 1) g_go.store(true);
    if ((e = aclrtSynchronizeStream(s)) != ACL_SUCCESS) return fail("sync", e);
    if ((e = aclrtDestroyStream(s)) != ACL_SUCCESS) return fail("destroy", e);
}
}  // namespace

int main() {
    CHECK(aclInit(nullptr));
    uint32_t count = 0;
    CHECK(aclrtGetDeviceCount(&count));
    CHECK(aclrtSetDevice(0));
    for (auto &ev : g_events) CHECK(aclrtCreateEvent(&ev));
    std::atomic<int> fails{0};
    std::vector<std::thread> ts;
    for (int i = 0; i < kThreads; i++) ts.emplace_back(worker, i, count, &fails);
    for (auto &t : ts) t.join();
    EXPECT(fails.load() == 0);
    EXPECT(static_cast<int>(g_log.size()) == kThreads);
    for (int i = 0; i < kThreads; i++) EXPECT(g_log[i] == i);
    float ms = -1;
    CHECK(aclrtEventElapsedTime(&ms, g_events[0], g_events[kThreads - 1]));
    EXPECT(ms >= 0.0f);
    for (auto &ev : g_events) CHECK(aclrtDestroyEvent(ev));
    for (uint32_t d = 0; d < count && d < kThreads; d++) {
        CHECK(aclrtSetDevice(static_cast<int32_t>(d)));
        CHECK(aclrtSynchronizeDevice());
    }
    CHECK(aclFinalize());
    std::printf("rt_threads passed\n");
    return 0;
}
