/* A second source of the kernel library: it only declares add_custom (defined in
 * add_custom.cpp) and launches it with the kernel-call operator. */
#include "kernel_operator.h"

extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z);

void add_custom_do_elsewhere(uint32_t blockDim, void *stream, uint8_t *x, uint8_t *y, uint8_t *z)
{
    add_custom<<<blockDim, nullptr, stream>>>(x, y, z);
}
