/* npu-emu: ge::AscendString (`#include "graph/ascend_string.h"`), a string of the graph API. */
#ifndef NPUEMU_GRAPH_ASCEND_STRING_H
#define NPUEMU_GRAPH_ASCEND_STRING_H

#include <cstddef>
#include <string>

namespace ge {
class AscendString {
public:
    AscendString() = default;
    AscendString(const char *s) : s_(s ? s : "") {} /* NOLINT: implicit, as GE's */
    const char *GetString() const { return s_.c_str(); }
    size_t GetLength() const { return s_.size(); }
    bool operator<(const AscendString &o) const { return s_ < o.s_; }
    bool operator==(const AscendString &o) const { return s_ == o.s_; }
    bool operator!=(const AscendString &o) const { return s_ != o.s_; }

private:
    std::string s_;
};
} // namespace ge

#endif /* NPUEMU_GRAPH_ASCEND_STRING_H */
