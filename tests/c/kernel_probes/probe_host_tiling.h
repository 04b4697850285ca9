/* The tiling struct of uneven_add (kernels.cpp), shared with probe_host.cpp. */
#ifndef PROBE_HOST_TILING_H
#define PROBE_HOST_TILING_H
#include <cstdint>
/* The first formerNum blocks take formerLength elements, the others tailLength. */
struct UnevenTiling {
    uint32_t formerNum;
    uint32_t formerLength;
    uint32_t tailLength;
    uint32_t tileLength;
};
#endif
