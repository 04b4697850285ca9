/* The HelloWorld layout of the Ascend C introduction: a kernel with no parameters, printf with
 * `using namespace AscendC` (unqualified, with and without arguments), launched from a host
 * wrapper in the kernel source with the kernel-call operator and a nullptr l2ctrl. */
#include "kernel_operator.h"
using namespace AscendC;

extern "C" __global__ __aicore__ void hello_world()
{
    printf("Hello World!!! block %ld of %ld\n", GetBlockIdx(), GetBlockNum());
    printf("Hello World!!!\n");
}

void hello_world_do(uint32_t blockDim, void *stream)
{
    hello_world<<<blockDim, nullptr, stream>>>();
}
