/* The tiling data of the demo op, as an op project's host tiling header declares it
 * (op_host/<op>_tiling.h): the kernel and the host include it. */
#ifndef TILING_DEMO_TILING_H
#define TILING_DEMO_TILING_H
#include "register/tilingdata_base.h"

namespace optiling {
BEGIN_TILING_DATA_DEF(DemoTilingData)
TILING_DATA_FIELD_DEF(uint32_t, totalLength);
TILING_DATA_FIELD_DEF(uint32_t, tileNum);
TILING_DATA_FIELD_DEF(float, scale);
END_TILING_DATA_DEF;

REGISTER_TILING_DATA_CLASS(DemoOp, DemoTilingData)
} // namespace optiling
#endif
