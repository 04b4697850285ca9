/* Tiling of scale_custom, shared by the kernel and the host. Found by the kernel build only
 * through ascendc_include_directories (not next to the kernel source). */
#ifndef SCALE_TILING_H
#define SCALE_TILING_H
#include <cstdint>
struct ScaleTiling {
    uint32_t blockLength;
    float scale;
};
#endif
