/* npu-emu: `#include "exe_graph/runtime/continuous_vector.h"`: see npuemu_gert.h. */
#ifndef NPUEMU_EXE_GRAPH_CONTINUOUS_VECTOR_H
#define NPUEMU_EXE_GRAPH_CONTINUOUS_VECTOR_H
#include "exe_graph/runtime/npuemu_gert.h"
#endif
