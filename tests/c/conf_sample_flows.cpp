// Host flows of the vendor runtime examples (hicann/runtime `example/`: event status, event
// timestamp, simple callback, device multi-thread, h2h copy, error handling), written anew
// for npu-emu. Kernels are replaced by host functions on the stream, so "long task" means a
// task that holds the stream until the test releases it. `conf_sample_flows FLOW`.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>
#include "acl/acl.h"

#define REQUIRE(call)                                                                        \
    do {                                                                                     \
        aclError e_ = (call);                                                                \
        if (e_ != ACL_SUCCESS) {                                                             \
            const char *m_ = aclGetRecentErrMsg();                                           \
            std::fprintf(stderr, "FAIL %s:%d: %s returned %d: %s\n", __FILE__, __LINE__, #call, \
                         static_cast<int>(e_), m_ ? m_ : "(no message)");                    \
            std::exit(1);                                                                    \
        }                                                                                    \
    } while (0)

#define EXPECT(cond)                                                                  \
    do {                                                                              \
        if (!(cond)) {                                                                \
            std::fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);      \
            std::exit(1);                                                             \
        }                                                                             \
    } while (0)

namespace {

std::atomic<int> g_release{0};
std::atomic<int> g_started{0};

// Stands in for the examples' LongOP kernel: holds the stream until released.
void HoldStream(void *arg)
{
    g_started = 1;
    while (g_release.load() == 0) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    auto *counter = static_cast<uint32_t *>(arg);
    if (counter != nullptr) {
        (*counter)++;
    }
}

// example/1_basic_features/event/0_event_status
void EventStatusFlow()
{
    int32_t deviceId = 0;
    aclrtContext context = nullptr;
    aclrtStream stream = nullptr;
    aclrtEvent event = nullptr;
    aclrtEventRecordedStatus status = ACL_EVENT_RECORDED_STATUS_COMPLETE;
    REQUIRE(aclInit(nullptr));
    REQUIRE(aclrtSetDevice(deviceId));
    REQUIRE(aclrtCreateContext(&context, deviceId));
    REQUIRE(aclrtCreateStream(&stream));
    REQUIRE(aclrtSetStreamFailureMode(stream, ACL_STOP_ON_FAILURE));
    REQUIRE(aclrtCreateEvent(&event));
    REQUIRE(aclrtQueryEventStatus(event, &status));
    EXPECT(status == ACL_EVENT_RECORDED_STATUS_NOT_READY);

    uint32_t num = 0;
    uint32_t *numDevice = nullptr;
    REQUIRE(aclrtMalloc(reinterpret_cast<void **>(&numDevice), sizeof(num), ACL_MEM_MALLOC_HUGE_FIRST));
    REQUIRE(aclrtMemcpy(numDevice, sizeof(num), &num, sizeof(num), ACL_MEMCPY_HOST_TO_DEVICE));
    uint32_t hostCounter = 0;
    g_release = 0;
    REQUIRE(aclrtLaunchHostFunc(stream, HoldStream, &hostCounter));
    REQUIRE(aclrtRecordEvent(event, stream));
    REQUIRE(aclrtQueryEventStatus(event, &status));
    EXPECT(status == ACL_EVENT_RECORDED_STATUS_NOT_READY); // recorded, not yet reached
    g_release = 1;
    REQUIRE(aclrtSynchronizeEvent(event));
    REQUIRE(aclrtQueryEventStatus(event, &status));
    EXPECT(status == ACL_EVENT_RECORDED_STATUS_COMPLETE);
    EXPECT(hostCounter == 1);
    REQUIRE(aclrtMemcpy(&num, sizeof(num), numDevice, sizeof(num), ACL_MEMCPY_DEVICE_TO_HOST));
    EXPECT(num == 0);

    REQUIRE(aclrtFree(numDevice));
    REQUIRE(aclrtDestroyEvent(event));
    REQUIRE(aclrtDestroyStreamForce(stream));
    REQUIRE(aclrtDestroyContext(context));
    REQUIRE(aclrtResetDeviceForce(deviceId));
    REQUIRE(aclFinalize());
}

// example/1_basic_features/event/1_event_timestamp
void EventTimestampFlow()
{
    aclrtContext context = nullptr;
    aclrtStream stream = nullptr;
    aclrtEvent startEvent = nullptr, endEvent = nullptr;
    REQUIRE(aclInit(nullptr));
    REQUIRE(aclrtSetDevice(0));
    REQUIRE(aclrtCreateContext(&context, 0));
    REQUIRE(aclrtCreateStream(&stream));
    REQUIRE(aclrtCreateEvent(&startEvent));
    REQUIRE(aclrtCreateEvent(&endEvent));
    float shortMs = 0, longMs = 0;
    for (int round = 0; round < 2; round++) {
        g_release = 0;
        g_started = 0;
        REQUIRE(aclrtRecordEvent(startEvent, stream));
        REQUIRE(aclrtLaunchHostFunc(stream, HoldStream, nullptr));
        REQUIRE(aclrtRecordEvent(endEvent, stream));
        if (round == 1) {
            // Once the held task runs, the start event has completed: the end event then
            // completes at least the sleep later, however the threads are scheduled.
            while (g_started.load() == 0) {
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(30));
        }
        g_release = 1;
        REQUIRE(aclrtSynchronizeStream(stream));
        uint64_t t0 = 0, t1 = 0;
        REQUIRE(aclrtEventGetTimestamp(startEvent, &t0));
        REQUIRE(aclrtEventGetTimestamp(endEvent, &t1));
        EXPECT(t1 >= t0);
        REQUIRE(aclrtEventElapsedTime(round == 0 ? &shortMs : &longMs, startEvent, endEvent));
    }
    EXPECT(shortMs >= 0.0f);
    EXPECT(longMs >= 30.0f); // the held round took at least the sleep
    REQUIRE(aclrtDestroyEvent(startEvent));
    REQUIRE(aclrtDestroyEvent(endEvent));
    REQUIRE(aclrtDestroyStreamForce(stream));
    REQUIRE(aclrtDestroyContext(context));
    REQUIRE(aclrtResetDeviceForce(0));
    REQUIRE(aclFinalize());
}

// example/2_advanced_features/callback/0_simple_callback (report thread part)
aclrtContext g_cbContext = nullptr;
std::atomic<int> g_cbCalls{0};
std::atomic<bool> g_reportLoop{true};

void ReportThread()
{
    if (aclrtSetCurrentContext(g_cbContext) != ACL_SUCCESS) {
        std::fprintf(stderr, "FAIL: aclrtSetCurrentContext in the report thread\n");
        std::exit(1);
    }
    while (g_reportLoop.load()) {
        (void)aclrtProcessReport(100);
    }
}

void CallbackFunc(void *arg)
{
    EXPECT(*static_cast<int *>(arg) == 520);
    g_cbCalls++;
}

std::string ThreadIdString(std::thread::id tid)
{
    std::ostringstream os;
    os << tid;
    return os.str();
}

void CallbackFlow()
{
    aclrtStream stream = nullptr;
    REQUIRE(aclInit(nullptr));
    REQUIRE(aclrtSetDevice(0));
    REQUIRE(aclrtCreateContext(&g_cbContext, 0));
    REQUIRE(aclrtCreateStream(&stream));
    REQUIRE(aclrtSetStreamFailureMode(stream, ACL_STOP_ON_FAILURE));

    std::thread reportThread(ReportThread);
    // The examples turn std::thread::id into the uint64_t thread id this way.
    uint64_t reportTid = std::stoull(ThreadIdString(reportThread.get_id()));
    REQUIRE(aclrtSubscribeReport(reportTid, stream));
    int userData = 520;
    REQUIRE(aclrtLaunchCallback(CallbackFunc, &userData, ACL_CALLBACK_BLOCK, stream));
    g_release = 1;
    uint32_t hostCounter = 0;
    REQUIRE(aclrtLaunchHostFunc(stream, HoldStream, &hostCounter));
    for (int i = 0; i < 5; i++) {
        REQUIRE(aclrtLaunchCallback(CallbackFunc, &userData, ACL_CALLBACK_BLOCK, stream));
    }
    REQUIRE(aclrtSynchronizeStream(stream));
    EXPECT(g_cbCalls.load() == 6);
    EXPECT(hostCounter == 1);
    g_reportLoop = false;
    reportThread.join();
    REQUIRE(aclrtUnSubscribeReport(reportTid, stream));
    REQUIRE(aclrtDestroyStreamForce(stream));
    REQUIRE(aclrtDestroyContext(g_cbContext));
    REQUIRE(aclrtResetDeviceForce(0));
    REQUIRE(aclFinalize());
}

// example/1_basic_features/device/1_device_multi_thread (without the kernel)
std::atomic<int> g_threadOk{0};
void DeviceThread()
{
    aclrtStream stream = nullptr;
    REQUIRE(aclrtSetDevice(0));
    REQUIRE(aclrtCreateStream(&stream));
    uint32_t n = 0;
    REQUIRE(aclrtGetDeviceCount(&n));
    EXPECT(n >= 1);
    aclrtDeviceStatus st = ACL_RT_DEVICE_STATUS_ABNORMAL;
    REQUIRE(aclrtQueryDeviceStatus(0, &st));
    EXPECT(st == ACL_RT_DEVICE_STATUS_NORMAL);
    aclrtRunMode mode = ACL_DEVICE;
    REQUIRE(aclrtGetRunMode(&mode));
    EXPECT(mode == ACL_HOST);
    int32_t least = -1, greatest = -1;
    REQUIRE(aclrtDeviceGetStreamPriorityRange(&least, &greatest));
    int64_t vectorCores = 0;
    REQUIRE(aclrtGetDeviceInfo(0, ACL_DEV_ATTR_VECTOR_CORE_NUM, &vectorCores));
    EXPECT(vectorCores > 0);

    const uint32_t total = 1024;
    const size_t bytes = total * sizeof(float);
    float *hostA = nullptr, *hostDst = nullptr;
    REQUIRE(aclrtMallocHost(reinterpret_cast<void **>(&hostA), bytes));
    REQUIRE(aclrtMallocHost(reinterpret_cast<void **>(&hostDst), bytes));
    float *devA = nullptr;
    REQUIRE(aclrtMalloc(reinterpret_cast<void **>(&devA), bytes, ACL_MEM_MALLOC_HUGE_FIRST));
    for (uint32_t i = 0; i < total; i++) {
        hostA[i] = static_cast<float>(i);
    }
    REQUIRE(aclrtMemcpyAsync(devA, bytes, hostA, bytes, ACL_MEMCPY_HOST_TO_DEVICE, stream));
    REQUIRE(aclrtMemcpyAsync(hostDst, bytes, devA, bytes, ACL_MEMCPY_DEVICE_TO_HOST, stream));
    REQUIRE(aclrtSynchronizeStream(stream));
    EXPECT(std::memcmp(hostA, hostDst, bytes) == 0);
    REQUIRE(aclrtFree(devA));
    REQUIRE(aclrtFreeHost(hostA));
    REQUIRE(aclrtFreeHost(hostDst));
    REQUIRE(aclrtDestroyStream(stream));
    REQUIRE(aclrtResetDeviceForce(0));
    g_threadOk = 1;
}

void MultiThreadFlow()
{
    REQUIRE(aclInit(nullptr));
    REQUIRE(aclrtSetDevice(0));
    std::thread t(DeviceThread);
    t.join();
    EXPECT(g_threadOk.load() == 1);
    REQUIRE(aclFinalize());
}

// example/1_basic_features/memory/0_h2h_memory_copy
void H2hFlow()
{
    REQUIRE(aclInit(nullptr));
    REQUIRE(aclrtSetDevice(0));
    aclrtStream stream = nullptr;
    REQUIRE(aclrtCreateStream(&stream));
    const uint64_t size = 1024 * 1024;
    int *a = nullptr, *b = nullptr;
    REQUIRE(aclrtMallocHost(reinterpret_cast<void **>(&a), size));
    REQUIRE(aclrtMallocHost(reinterpret_cast<void **>(&b), size));
    std::memset(a, 0, size);
    *a = 123;
    REQUIRE(aclrtMemcpy(b, size, a, size, ACL_MEMCPY_HOST_TO_HOST));
    EXPECT(*b == 123);
    REQUIRE(aclrtDestroyStreamForce(stream));
    REQUIRE(aclrtFreeHost(a));
    REQUIRE(aclrtFreeHost(b));
    REQUIRE(aclrtResetDeviceForce(0));
    REQUIRE(aclFinalize());
}

// example/0_quickstart/1_error_handling
void ErrorHandlingFlow()
{
    REQUIRE(aclInit(nullptr));
    REQUIRE(aclrtSetDevice(0));
    aclrtRunMode mode = ACL_DEVICE;
    REQUIRE(aclrtGetRunMode(&mode));
    aclError ret = aclrtGetRunMode(nullptr);
    EXPECT(ret == ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL) == ACL_ERROR_INVALID_PARAM);
    EXPECT(aclrtGetLastError(ACL_RT_THREAD_LEVEL) == ACL_ERROR_INVALID_PARAM);
    const char *msg = aclGetRecentErrMsg();
    EXPECT(msg != nullptr && std::strstr(msg, "aclrtGetRunMode") != nullptr);
    // Consumed once: the codes are cleared, the message was taken.
    EXPECT(aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL) == ACL_SUCCESS);
    EXPECT(aclrtGetLastError(ACL_RT_THREAD_LEVEL) == ACL_SUCCESS);
    EXPECT(aclGetRecentErrMsg() == nullptr);
    REQUIRE(aclrtResetDeviceForce(0));
    REQUIRE(aclFinalize());
}

} // namespace

int main(int argc, char **argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: conf_sample_flows FLOW\n");
        return 2;
    }
    std::string flow = argv[1];
    if (flow == "event_status") {
        EventStatusFlow();
    } else if (flow == "event_timestamp") {
        EventTimestampFlow();
    } else if (flow == "callback") {
        CallbackFlow();
    } else if (flow == "multi_thread") {
        MultiThreadFlow();
    } else if (flow == "h2h") {
        H2hFlow();
    } else if (flow == "error_handling") {
        ErrorHandlingFlow();
    } else {
        std::fprintf(stderr, "unknown flow %s\n", argv[1]);
        return 2;
    }
    std::printf("flow %s passed\n", argv[1]);
    return 0;
}
