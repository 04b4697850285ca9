/* npu-emu: ge::Shape, as host tiling code passes shapes to the high-level APIs' tiling functions
 * (`ge::Shape shape({m, k}); AscendC::SoftMaxTilingFunc(shape, ...)`). Only the shape class of the
 * graph headers: dimensions as int64_t. */
#ifndef NPUEMU_GRAPH_TENSOR_H
#define NPUEMU_GRAPH_TENSOR_H

#include <cstddef>
#include <cstdint>
#include <vector>

#include "graph/ge_error_codes.h"

namespace ge {

class Shape {
public:
    Shape() = default;
    explicit Shape(const std::vector<int64_t> &dims) : dims_(dims) {}
    size_t GetDimNum() const { return dims_.size(); }
    int64_t GetDim(size_t idx) const { return idx < dims_.size() ? dims_[idx] : 0; }
    graphStatus SetDim(size_t idx, int64_t value)
    {
        if (idx >= dims_.size()) {
            return GRAPH_FAILED;
        }
        dims_[idx] = value;
        return GRAPH_SUCCESS;
    }
    std::vector<int64_t> GetDims() const { return dims_; }
    /* The product of the dimensions (0 for a shape without dimensions). */
    int64_t GetShapeSize() const
    {
        if (dims_.empty()) {
            return 0;
        }
        int64_t n = 1;
        for (int64_t d : dims_) {
            n *= d;
        }
        return n;
    }

private:
    std::vector<int64_t> dims_;
};

} // namespace ge

#endif /* NPUEMU_GRAPH_TENSOR_H */
