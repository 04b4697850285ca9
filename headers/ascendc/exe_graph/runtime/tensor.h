/* npu-emu: `#include "exe_graph/runtime/tensor.h"`: see npuemu_gert.h. */
#ifndef NPUEMU_EXE_GRAPH_TENSOR_H
#define NPUEMU_EXE_GRAPH_TENSOR_H
#include "exe_graph/runtime/npuemu_gert.h"
#endif
