// The older runtime path of registered kernel binaries (CANN's libruntime: rtDevBinaryRegister,
// rtFunctionRegister, rtKernelLaunch, rtDevBinaryUnRegister), declared as programs that use it
// declare it, on the kernel binary built by ascendc_fatbin_library. rt_main DIR
#include "acl/acl.h"
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

typedef int32_t rtError_t;
typedef struct tagRtDevBinary {
    uint32_t magic;
    uint32_t version;
    const void *data;
    uint64_t length;
} rtDevBinary_t;
extern "C" {
rtError_t rtDevBinaryRegister(const rtDevBinary_t *bin, void **hdl);
rtError_t rtDevBinaryUnRegister(void *hdl);
rtError_t rtFunctionRegister(void *binHandle, const void *stubFunc, const char *stubName, const void *devFunc,
                             uint32_t funcMode);
rtError_t rtKernelLaunch(const void *stubFunc, uint32_t blockDim, void *args, uint32_t argsSize, void *smDesc,
                         void *stream);
}

static char scale_add_stub, missing_stub; // the stubs: any unique host addresses
static int failures = 0;

static void expect(bool ok, const char *what, rtError_t rc = 0)
{
    std::printf("%s %s (%d)%s%s\n", ok ? "ok" : "FAIL", what, (int)rc, ok ? "" : ": ", ok ? "" : aclGetRecentErrMsg());
    failures += !ok;
}

int main(int argc, char **argv)
{
    std::string dir = argc > 1 ? argv[1] : ".";
    aclInit(nullptr);
    aclrtSetDevice(0);
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);

    std::ifstream f(dir + "/two_kernels/two_kernels.o", std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    rtDevBinary_t bin{0x43554245U /* RT_DEV_BINARY_MAGIC_ELF */, 0, bytes.data(), bytes.size()};
    void *handle = nullptr;
    rtError_t rc = rtDevBinaryRegister(&bin, &handle);
    expect(rc == 0 && handle != nullptr, "rtDevBinaryRegister", rc);
    rc = rtFunctionRegister(handle, &scale_add_stub, "scale_add", "scale_add", 0);
    expect(rc == 0, "rtFunctionRegister scale_add", rc);
    rc = rtFunctionRegister(handle, &missing_stub, "no_such", "no_such", 0);
    expect(rc == ACL_ERROR_RT_KERNEL_LOOKUP, "rtFunctionRegister of an unknown kernel is 507027", rc);
    std::printf("message: %s\n", aclGetRecentErrMsg());

    const uint32_t n = 3000;
    std::vector<float> x(n), y(n), z(n);
    for (uint32_t i = 0; i < n; i++) {
        x[i] = (float)(i % 19);
        y[i] = 0.5f * (float)(i % 7);
    }
    float *dx, *dy, *dz;
    aclrtMalloc((void **)&dx, n * 4, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void **)&dy, n * 4, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMalloc((void **)&dz, n * 4, ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(dx, n * 4, x.data(), n * 4, ACL_MEMCPY_HOST_TO_DEVICE);
    aclrtMemcpy(dy, n * 4, y.data(), n * 4, ACL_MEMCPY_HOST_TO_DEVICE);
    struct {
        void *x, *y, *z;
        float alpha;
        uint32_t n;
    } args{dx, dy, dz, 3.0f, n};
    rc = rtKernelLaunch(&scale_add_stub, 6, &args, sizeof(args), nullptr, stream);
    expect(rc == 0, "rtKernelLaunch", rc);
    args.alpha = -100.0f; // the block was copied at the call
    rc = rtKernelLaunch(&missing_stub, 6, &args, sizeof(args), nullptr, stream);
    expect(rc == ACL_ERROR_RT_PARAM_INVALID, "rtKernelLaunch of an unregistered stub is 107000", rc);
    rc = rtKernelLaunch(&scale_add_stub, 6, &args, 8, nullptr, stream);
    expect(rc == ACL_ERROR_RT_PARAM_INVALID, "rtKernelLaunch with a short argument block is 107000", rc);
    rc = aclrtSynchronizeStream(stream);
    expect(rc == 0, "synchronize", rc);
    aclrtMemcpy(z.data(), n * 4, dz, n * 4, ACL_MEMCPY_DEVICE_TO_HOST);
    int bad = 0;
    for (uint32_t i = 0; i < n; i++) {
        bad += z[i] != 3.0f * x[i] + y[i];
    }
    expect(bad == 0, "z = 3 * x + y from the registered kernel");
    rc = rtDevBinaryUnRegister(handle);
    expect(rc == 0, "rtDevBinaryUnRegister", rc);
    rc = rtKernelLaunch(&scale_add_stub, 6, &args, sizeof(args), nullptr, stream);
    expect(rc == ACL_ERROR_RT_PARAM_INVALID, "the stub goes with the binary", rc);
    std::vector<char> junk(100, 0);
    rtDevBinary_t notours{0x43554245U, 0, junk.data(), junk.size()};
    rc = rtDevBinaryRegister(&notours, &handle);
    expect(rc == ACL_ERROR_INVALID_FILE, "a device object that is not npu-emu's is 100003", rc);
    aclrtDestroyStream(stream);
    aclrtResetDevice(0);
    aclFinalize();
    std::printf(failures == 0 ? "PASS\n" : "FAILED %d\n", failures);
    return failures == 0 ? 0 : 1;
}
