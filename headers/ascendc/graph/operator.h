/* npu-emu: ge::Operator as op_host code names it (the CheckSupport / OpSelectFormat callbacks of
 * an OpDef take `const ge::Operator &`). The graph engine is not emulated: npu-emu never calls
 * those callbacks, so the class only has to exist. */
#ifndef NPUEMU_GRAPH_OPERATOR_H
#define NPUEMU_GRAPH_OPERATOR_H

#include "graph/ascend_string.h"
#include "graph/ge_error_codes.h"
#include "graph/tensor.h"
#include "graph/types.h"

namespace ge {
class Operator {
public:
    Operator() = default;
    explicit Operator(const char *type) : type_(type ? type : "") {}
    graphStatus GetOpType(AscendString &t) const
    {
        t = AscendString(type_.GetString());
        return GRAPH_SUCCESS;
    }

private:
    AscendString type_;
};
} // namespace ge

#endif /* NPUEMU_GRAPH_OPERATOR_H */
