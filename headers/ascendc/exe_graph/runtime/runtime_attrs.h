/* npu-emu: `#include "exe_graph/runtime/runtime_attrs.h"`: see npuemu_gert.h. */
#ifndef NPUEMU_EXE_GRAPH_RUNTIME_ATTRS_H
#define NPUEMU_EXE_GRAPH_RUNTIME_ATTRS_H
#include "exe_graph/runtime/npuemu_gert.h"
#endif
