/* npu-emu: `#include "exe_graph/runtime/infer_shape_context.h"`: see npuemu_gert.h. */
#ifndef NPUEMU_EXE_GRAPH_INFER_SHAPE_CONTEXT_H
#define NPUEMU_EXE_GRAPH_INFER_SHAPE_CONTEXT_H
#include "exe_graph/runtime/npuemu_gert.h"
#endif
