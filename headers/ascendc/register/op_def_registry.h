/* npu-emu: `#include "register/op_def_registry.h"` in op_host code: the OpDef classes
 * (register/op_def.h), the gert contexts (exe_graph/runtime/), OP_ADD, and the registries the
 * generated aclnn API reads.
 *
 *   OP_ADD(AddCustom);                               registers ops::AddCustom("AddCustom")
 *   OP_ADD(AddCustom, optiling::TilingCompileInfo);  ... with a compile-info object that
 *                                                    SetTilingParse fills and GetCompileInfo reads
 *
 * `npuemu_opdef_json()` (a C function every op_host shared object exports) describes the
 * registered operators for `op_build`. */
#ifndef NPUEMU_REGISTER_OP_DEF_REGISTRY_H
#define NPUEMU_REGISTER_OP_DEF_REGISTRY_H

#include <memory>
#include <string>
#include <vector>

#include "register/op_def.h"
#include "register/op_impl_registry.h"

namespace npuemu {

inline std::vector<std::unique_ptr<ops::OpDef>> &op_registry()
{
    static std::vector<std::unique_ptr<ops::OpDef>> r;
    return r;
}

inline ops::OpDef *find_op(const std::string &type)
{
    for (auto &d : op_registry()) {
        if (d->npuemu_type() == type) {
            return d.get();
        }
    }
    return nullptr;
}

template <class Op, class CompileInfo = void> struct OpAdder {
    explicit OpAdder(const char *type)
    {
        std::unique_ptr<ops::OpDef> d(new Op(type));
        set_info(d.get(), static_cast<CompileInfo *>(nullptr));
        op_registry().push_back(std::move(d));
    }
    template <class T> static void set_info(ops::OpDef *d, T *) { d->npuemu_compile_info = std::make_shared<T>(); }
    static void set_info(ops::OpDef *, void *) {}
};

inline std::string json_escape(const std::string &s)
{
    std::string o;
    for (char c : s) {
        if (c == '"' || c == '\\') {
            o += '\\';
        }
        o += c;
    }
    return o;
}

inline const char *option_name(ops::Option o)
{
    switch (o) {
    case ops::OPTIONAL: return "optional";
    case ops::DYNAMIC: return "dynamic";
    case ops::REQUIRED: return "required";
    default: return "ignore";
    }
}

inline std::string params_json(const std::vector<ops::OpParamDef> &ps)
{
    std::string s = "[";
    for (size_t i = 0; i < ps.size(); ++i) {
        const ops::OpParamDef &p = ps[i];
        s += std::string(i ? "," : "") + "{\"name\":\"" + json_escape(p.npuemu_name()) + "\",\"param_type\":\"" +
             option_name(p.npuemu_option()) + "\",\"types\":[";
        for (size_t k = 0; k < p.npuemu_types().size(); ++k) {
            s += (k ? "," : "") + std::to_string(static_cast<int>(p.npuemu_types()[k]));
        }
        s += "],\"formats\":[";
        for (size_t k = 0; k < p.npuemu_formats().size(); ++k) {
            s += (k ? "," : "") + std::to_string(static_cast<int>(p.npuemu_formats()[k]));
        }
        s += "]}";
    }
    return s + "]";
}

inline std::string registry_json()
{
    std::string s = "[";
    bool first = true;
    for (auto &d : op_registry()) {
        s += std::string(first ? "" : ",") + "{\"op\":\"" + json_escape(d->npuemu_type()) + "\",\"inputs\":" +
             params_json(d->npuemu_inputs()) + ",\"outputs\":" + params_json(d->npuemu_outputs()) + ",\"attrs\":[";
        first = false;
        const auto &as = d->npuemu_attrs();
        for (size_t i = 0; i < as.size(); ++i) {
            s += std::string(i ? "," : "") + "{\"name\":\"" + json_escape(as[i].npuemu_name()) + "\",\"type\":\"" +
                 as[i].npuemu_kind() + "\",\"param_type\":\"" + option_name(as[i].npuemu_option()) + "\"}";
        }
        s += "]}";
    }
    return s + "]";
}

} // namespace npuemu

/* Every op_host shared object exports this (weak: one definition survives the link). */
extern "C" __attribute__((weak, visibility("default"), used)) const char *npuemu_opdef_json(void)
{
    static std::string s;
    s = npuemu::registry_json();
    return s.c_str();
}

#define NPUEMU_OP_CAT2(a, b) a##b
#define NPUEMU_OP_CAT(a, b) NPUEMU_OP_CAT2(a, b)
#define OP_ADD(opType, ...)                                                                          \
    static ::npuemu::OpAdder<opType, ##__VA_ARGS__> NPUEMU_OP_CAT(npuemu_op_adder_##opType##_, __LINE__)(#opType)

#endif /* NPUEMU_REGISTER_OP_DEF_REGISTRY_H */
