/* A stand-in libascendcl.so with the same function names as CANN's, every one failing. The
 * LD_PRELOAD test links a program against it, then runs the program with our library in
 * front: the program must then work. */
#include <stddef.h>
#include <stdint.h>

#define DUMMY_ERR 500000

int aclInit(const char *configPath) { (void)configPath; return DUMMY_ERR; }
int aclFinalize(void) { return DUMMY_ERR; }
int aclrtSetDevice(int32_t deviceId) { (void)deviceId; return DUMMY_ERR; }
int aclrtResetDevice(int32_t deviceId) { (void)deviceId; return DUMMY_ERR; }
int aclrtMalloc(void **devPtr, size_t size, int policy) { (void)devPtr; (void)size; (void)policy; return DUMMY_ERR; }
int aclrtFree(void *devPtr) { (void)devPtr; return DUMMY_ERR; }
int aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count, int kind)
{
    (void)dst; (void)destMax; (void)src; (void)count; (void)kind;
    return DUMMY_ERR;
}
uint16_t aclFloatToFloat16(float value) { (void)value; return 0xFFFF; }
const char *aclGetRecentErrMsg(void) { return "dummy libascendcl.so"; }
