/* Tiling of the add_custom_tiling kernel, passed BY VALUE from the host (as in the vendor
 * AddKernelInvocationTilingNeo sample). Shared by host and kernel code. */
#ifndef ADD_CUSTOM_TILING_H
#define ADD_CUSTOM_TILING_H

#include <stdint.h>

struct AddCustomTilingData {
    uint32_t totalLength;  /* fp16 elements of x, y and z */
    uint32_t tileLength;   /* elements per tile: a multiple of 16 (32 bytes of fp16) */
    uint32_t formerNum;    /* the first formerNum blocks take formerLength elements ... */
    uint32_t formerLength;
    uint32_t tailLength;   /* ... the others tailLength (= formerLength - 1, or formerLength) */
};

/* Split totalLength over blockDim blocks as evenly as possible. */
static inline struct AddCustomTilingData AddCustomTiling(uint32_t totalLength, uint32_t blockDim, uint32_t tileLength)
{
    struct AddCustomTilingData t;
    t.totalLength = totalLength;
    t.tileLength = tileLength;
    t.tailLength = totalLength / blockDim;
    t.formerNum = totalLength % blockDim;
    t.formerLength = t.tailLength + (t.formerNum ? 1 : 0);
    return t;
}

#endif /* ADD_CUSTOM_TILING_H */
