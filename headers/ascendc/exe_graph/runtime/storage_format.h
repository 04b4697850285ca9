/* npu-emu: `#include "exe_graph/runtime/storage_format.h"`: see npuemu_gert.h. */
#ifndef NPUEMU_EXE_GRAPH_STORAGE_FORMAT_H
#define NPUEMU_EXE_GRAPH_STORAGE_FORMAT_H
#include "exe_graph/runtime/npuemu_gert.h"
#endif
