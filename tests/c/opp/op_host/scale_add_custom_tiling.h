// ScaleAddCustom: the tiling data shared by the host tiling function and the kernel.
#ifndef SCALE_ADD_CUSTOM_TILING_H
#define SCALE_ADD_CUSTOM_TILING_H
#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(ScaleAddCustomTilingData)
TILING_DATA_FIELD_DEF(uint32_t, blockLength);
TILING_DATA_FIELD_DEF(uint32_t, tileLength);
TILING_DATA_FIELD_DEF(float, alpha);
TILING_DATA_FIELD_DEF(float, shift);
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(ScaleAddCustom, ScaleAddCustomTilingData)
} // namespace optiling
#endif
