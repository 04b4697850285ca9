/* Tiling structures shared by the probe kernels and their host program. */
#ifndef PROBE_TILING_H
#define PROBE_TILING_H
#include <cstdint>

/* Read by leakyrelu_custom from global memory, one uint32_t at a time (the CopyTiling pattern). */
struct LeakyReluTiling {
    uint32_t totalLength;
    uint32_t tileNum;
    float alpha;
};

/* Passed by value to sub_muls_custom. */
struct SubMulsTiling {
    uint32_t blockLength;
    uint32_t tileLength;
    float scale;
};
#endif
