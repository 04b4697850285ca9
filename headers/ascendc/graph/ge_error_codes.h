/* npu-emu: ge::graphStatus and its two common values (`#include "graph/ge_error_codes.h"`). */
#ifndef NPUEMU_GRAPH_GE_ERROR_CODES_H
#define NPUEMU_GRAPH_GE_ERROR_CODES_H

#include <cstdint>

namespace ge {
using graphStatus = uint32_t;
constexpr graphStatus GRAPH_SUCCESS = 0;
constexpr graphStatus GRAPH_FAILED = 0xFFFFFFFF;
constexpr graphStatus GRAPH_PARAM_INVALID = 50331649;
constexpr graphStatus GRAPH_NOT_CHANGED = 1343242304;
} // namespace ge

#endif /* NPUEMU_GRAPH_GE_ERROR_CODES_H */
