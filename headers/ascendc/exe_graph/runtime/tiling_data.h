/* npu-emu: `#include "exe_graph/runtime/tiling_data.h"`: see npuemu_gert.h. */
#ifndef NPUEMU_EXE_GRAPH_TILING_DATA_H
#define NPUEMU_EXE_GRAPH_TILING_DATA_H
#include "exe_graph/runtime/npuemu_gert.h"
#endif
