/* npu-emu: the other registration style of op_host code (`#include "register/op_impl_registry.h"`):
 *
 *   IMPL_OP_OPTILING(AddCustom).Tiling(TilingFunc).TilingParse<CompileInfo>(TilingPrepare);
 *   IMPL_OP_INFERSHAPE(AddCustom).InferShape(InferShape).InferDataType(InferDataType);
 *   IMPL_OP(AddCustom).InferShape(...).Tiling(...);
 *
 * The functions registered here are used for the operator type when its OpDef sets none. */
#ifndef NPUEMU_REGISTER_OP_IMPL_REGISTRY_H
#define NPUEMU_REGISTER_OP_IMPL_REGISTRY_H

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "exe_graph/runtime/npuemu_gert.h"
#include "graph/types.h"

namespace npuemu {

struct OpImplFuncs {
    std::function<uint32_t(gert::TilingContext *)> tiling;
    std::function<uint32_t(gert::TilingParseContext *)> parse;
    std::function<uint32_t(gert::InferShapeContext *)> infer_shape;
    std::function<uint32_t(gert::InferDataTypeContext *)> infer_dtype;
    std::shared_ptr<void> compile_info;
};

inline std::map<std::string, OpImplFuncs> &impl_registry()
{
    static std::map<std::string, OpImplFuncs> r;
    return r;
}

class OpImplRegister {
public:
    explicit OpImplRegister(const char *type) : f_(&impl_registry()[type ? type : ""]) {}
    template <class F> OpImplRegister &Tiling(F f)
    {
        f_->tiling = [f](gert::TilingContext *c) { return static_cast<uint32_t>(f(c)); };
        return *this;
    }
    template <class F> OpImplRegister &Tiling(F f, size_t) { return Tiling(f); }
    template <class T, class F> OpImplRegister &TilingParse(F f)
    {
        f_->compile_info = std::make_shared<T>();
        f_->parse = [f](gert::TilingParseContext *c) { return static_cast<uint32_t>(f(c)); };
        return *this;
    }
    template <class F> OpImplRegister &InferShape(F f)
    {
        f_->infer_shape = [f](gert::InferShapeContext *c) { return static_cast<uint32_t>(f(c)); };
        return *this;
    }
    template <class F> OpImplRegister &InferDataType(F f)
    {
        f_->infer_dtype = [f](gert::InferDataTypeContext *c) { return static_cast<uint32_t>(f(c)); };
        return *this;
    }
    template <class F> OpImplRegister &InferShapeRange(F) { return *this; }
    template <class... A> OpImplRegister &InputsDataDependency(A...) { return *this; }
    OpImplRegister &InputsDataDependency(std::initializer_list<int32_t>) { return *this; }
    template <class F> OpImplRegister &GenSimplifiedKey(F) { return *this; }
    OpImplRegister &PrivateAttr(const char *, ...) { return *this; }

private:
    OpImplFuncs *f_;
};

} // namespace npuemu

#define NPUEMU_IMPL_CAT2(a, b) a##b
#define NPUEMU_IMPL_CAT(a, b) NPUEMU_IMPL_CAT2(a, b)
#define IMPL_OP(op_type)                                                                              \
    static ::npuemu::OpImplRegister NPUEMU_IMPL_CAT(npuemu_impl_##op_type##_, __COUNTER__) =          \
        ::npuemu::OpImplRegister(#op_type)
#define IMPL_OP_OPTILING(op_type) IMPL_OP(op_type)
#define IMPL_OP_INFERSHAPE(op_type) IMPL_OP(op_type)

#endif /* NPUEMU_REGISTER_OP_IMPL_REGISTRY_H */
