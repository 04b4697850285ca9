/* Shapes of the AddKernelInvocation-style kernels (tests/c/kernel_launch/invocation), included
 * with quotes by the kernel source: the generated .npuemu.cpp must still find it. */
#ifndef INVOCATION_SHAPE_H
#define INVOCATION_SHAPE_H
#include <stdint.h>

constexpr int32_t TOTAL_LENGTH = 8 * 2048;
constexpr int32_t USE_CORE_NUM = 8;
constexpr int32_t BLOCK_LENGTH = TOTAL_LENGTH / USE_CORE_NUM;
constexpr int32_t TILE_NUM = 8;
constexpr int32_t BUFFER_NUM = 2;
constexpr int32_t TILE_LENGTH = BLOCK_LENGTH / TILE_NUM / BUFFER_NUM;

/* Passed by value to muls_custom through <<<>>>. */
struct MulsShape {
    uint32_t blockLength; /* fp16 elements per block, a multiple of 16 */
    float scale;
};
#endif
