/* npu-emu: the operator prototype of an Ascend C custom operator (`#include
 * "register/op_def_registry.h"`), as op_host code declares it:
 *
 *   namespace ops {
 *   class AddCustom : public OpDef {
 *   public:
 *       explicit AddCustom(const char *name) : OpDef(name)
 *       {
 *           this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
 *           this->Output("z").ParamType(REQUIRED).DataType({ge::DT_FLOAT16}).Format({ge::FORMAT_ND});
 *           this->Attr("alpha").AttrType(OPTIONAL).Float(1.0);
 *           this->SetInferShape(InferShape).SetInferDataType(InferDataType);
 *           this->AICore().SetTiling(optiling::TilingFunc).AddConfig("ascend910b");
 *       }
 *   };
 *   OP_ADD(AddCustom);
 *   }
 *
 * OP_ADD registers the definition in the process (one registry per shared object). npu-emu
 * reads it twice: `op_build` (the custom-operator project's build) lists the operators, their
 * inputs, outputs and attributes to generate the aclnn API (`npuemu_opdef_json`), and the
 * generated API finds the tiling function and checks the call's data types and formats against
 * the DataType / Format columns (register/npuemu_op_runtime.h). Configurations per SoC
 * (AddConfig(soc, OpAICoreConfig) with their own Input/Output lists) replace the OpDef's lists
 * for that SoC; npu-emu uses the one of "ascend910b" (the emulated SoC), else the OpDef's. */
#ifndef NPUEMU_REGISTER_OP_DEF_H
#define NPUEMU_REGISTER_OP_DEF_H

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "exe_graph/runtime/npuemu_gert.h"
#include "graph/ascend_string.h"
#include "graph/operator.h"
#include "graph/types.h"

namespace ops {

enum Option { IGNORE = 0, OPTIONAL = 1, REQUIRED = 2, DYNAMIC = 3, VIRTUAL = 4 };
enum class DependScope : uint32_t { ALL = 0, TILING = 1, INVALID_SCOPE };
enum class FollowType : uint32_t { ALL = 0, DTYPE = 1, FORMAT = 2, SHAPE = 3, INVALID_TYPE };
enum class ItemFindStatus { ITEM_FIND = 0, ITEM_NOEXIST = 1 };

using TilingKernelFunc = std::function<uint32_t(gert::TilingContext *)>;
using InferShapeKernelFunc = std::function<uint32_t(gert::InferShapeContext *)>;
using InferDataTypeKernelFunc = std::function<uint32_t(gert::InferDataTypeContext *)>;

class OpParamDef {
public:
    explicit OpParamDef(const char *name = "") : name_(name ? name : "") {}
    OpParamDef &ParamType(Option o)
    {
        option_ = o;
        return *this;
    }
    OpParamDef &DataType(std::vector<ge::DataType> v)
    {
        types_ = std::move(v);
        type_list_ = false;
        return *this;
    }
    OpParamDef &DataTypeList(std::vector<ge::DataType> v)
    {
        types_ = std::move(v);
        type_list_ = true;
        return *this;
    }
    OpParamDef &Format(std::vector<ge::Format> v)
    {
        formats_ = std::move(v);
        format_list_ = false;
        return *this;
    }
    OpParamDef &FormatList(std::vector<ge::Format> v)
    {
        formats_ = std::move(v);
        format_list_ = true;
        return *this;
    }
    OpParamDef &UnknownShapeFormat(std::vector<ge::Format> v)
    {
        unknown_formats_ = std::move(v);
        return *this;
    }
    OpParamDef &ValueDepend(Option o)
    {
        value_depend_ = o;
        return *this;
    }
    OpParamDef &ValueDepend(Option o, DependScope)
    {
        value_depend_ = o;
        return *this;
    }
    OpParamDef &IgnoreContiguous() { return *this; }
    OpParamDef &AutoContiguous() { return *this; }
    OpParamDef &Scalar() { return *this; }
    OpParamDef &ScalarList() { return *this; }
    OpParamDef &To(ge::DataType) { return *this; }
    OpParamDef &To(const char *) { return *this; }
    OpParamDef &Version(uint32_t) { return *this; }
    OpParamDef &InitValue(uint64_t) { return *this; }
    OpParamDef &OutputShapeDependOnCompute() { return *this; }
    OpParamDef &Follow(const char *) { return *this; }
    OpParamDef &Follow(const char *, FollowType) { return *this; }
    OpParamDef &Comment(const char *) { return *this; }

    const std::string &npuemu_name() const { return name_; }
    Option npuemu_option() const { return option_; }
    const std::vector<ge::DataType> &npuemu_types() const { return types_; }
    const std::vector<ge::Format> &npuemu_formats() const { return formats_; }
    bool npuemu_type_list() const { return type_list_; }
    bool npuemu_format_list() const { return format_list_; }

private:
    std::string name_;
    Option option_ = REQUIRED;
    std::vector<ge::DataType> types_;
    std::vector<ge::Format> formats_;
    std::vector<ge::Format> unknown_formats_;
    bool type_list_ = false;
    bool format_list_ = false;
    Option value_depend_ = IGNORE;
};

/* An attribute: its kind and default value (the generated API takes every attribute). */
class OpAttrDef {
public:
    explicit OpAttrDef(const char *name = "") : name_(name ? name : "") {}
    OpAttrDef &AttrType(Option o)
    {
        option_ = o;
        return *this;
    }
    OpAttrDef &Bool() { return kind("bool"); }
    OpAttrDef &Bool(bool v) { return kind("bool", v ? "true" : "false"); }
    OpAttrDef &Float() { return kind("float"); }
    OpAttrDef &Float(float v) { return kind("float", std::to_string(v)); }
    OpAttrDef &Int() { return kind("int"); }
    OpAttrDef &Int(int64_t v) { return kind("int", std::to_string(v)); }
    OpAttrDef &String() { return kind("string"); }
    OpAttrDef &String(const char *v) { return kind("string", v ? v : ""); }
    OpAttrDef &ListBool() { return kind("list_bool"); }
    OpAttrDef &ListBool(std::vector<bool>) { return kind("list_bool", "[]"); }
    OpAttrDef &ListFloat() { return kind("list_float"); }
    OpAttrDef &ListFloat(std::vector<float>) { return kind("list_float", "[]"); }
    OpAttrDef &ListInt() { return kind("list_int"); }
    OpAttrDef &ListInt(std::vector<int64_t>) { return kind("list_int", "[]"); }
    OpAttrDef &ListListInt() { return kind("list_list_int"); }
    OpAttrDef &ListListInt(std::vector<std::vector<int64_t>>) { return kind("list_list_int", "[]"); }
    OpAttrDef &Version(uint32_t) { return *this; }
    OpAttrDef &Comment(const char *) { return *this; }

    const std::string &npuemu_name() const { return name_; }
    const std::string &npuemu_kind() const { return kind_; }
    Option npuemu_option() const { return option_; }

private:
    OpAttrDef &kind(const char *k, std::string def = std::string())
    {
        kind_ = k;
        default_ = std::move(def);
        return *this;
    }
    std::string name_;
    std::string kind_ = "int";
    std::string default_;
    Option option_ = REQUIRED;
};

/* Inputs and outputs in declaration order, looked up by name (a second Input("x") returns the
 * first one, as CANN's). */
class NpuemuParams {
public:
    OpParamDef &get(const char *name)
    {
        for (auto &p : params_) {
            if (p.npuemu_name() == name) {
                return p;
            }
        }
        params_.emplace_back(name);
        return params_.back();
    }
    const std::vector<OpParamDef> &all() const { return params_; }

private:
    std::vector<OpParamDef> params_;
};

class OpAICoreConfig {
public:
    OpAICoreConfig() = default;
    explicit OpAICoreConfig(const char *) {}
    OpParamDef &Input(const char *name) { return inputs_.get(name); }
    OpParamDef &Output(const char *name) { return outputs_.get(name); }
    OpAICoreConfig &AsyncFlag(bool) { return *this; }
    OpAICoreConfig &DynamicCompileStaticFlag(bool) { return *this; }
    OpAICoreConfig &DynamicFormatFlag(bool) { return *this; }
    OpAICoreConfig &DynamicRankSupportFlag(bool) { return *this; }
    OpAICoreConfig &DynamicShapeSupportFlag(bool) { return *this; }
    OpAICoreConfig &NeedCheckSupportFlag(bool) { return *this; }
    OpAICoreConfig &PrecisionReduceFlag(bool) { return *this; }
    OpAICoreConfig &RangeLimitValue(const char *) { return *this; }
    OpAICoreConfig &ExtendCfgInfo(const char *, const char *) { return *this; }
    const NpuemuParams &npuemu_inputs() const { return inputs_; }
    const NpuemuParams &npuemu_outputs() const { return outputs_; }

private:
    NpuemuParams inputs_;
    NpuemuParams outputs_;
};

class OpAICoreDef {
public:
    template <class F> OpAICoreDef &SetTiling(F f)
    {
        tiling_ = [f](gert::TilingContext *c) { return static_cast<uint32_t>(f(c)); };
        return *this;
    }
    template <class F> OpAICoreDef &SetTilingParse(F f)
    {
        parse_ = [f](gert::TilingParseContext *c) { return static_cast<uint32_t>(f(c)); };
        return *this;
    }
    template <class F> OpAICoreDef &SetCheckSupport(F) { return *this; }
    template <class F> OpAICoreDef &SetOpSelectFormat(F) { return *this; }
    template <class F> OpAICoreDef &SetOpSupportInfo(F) { return *this; }
    template <class F> OpAICoreDef &SetOpSpecInfo(F) { return *this; }
    OpAICoreDef &AddConfig(const char *soc)
    {
        configs_.emplace_back(soc ? soc : "", OpAICoreConfig());
        return *this;
    }
    OpAICoreDef &AddConfig(const char *soc, OpAICoreConfig &cfg)
    {
        configs_.emplace_back(soc ? soc : "", cfg);
        return *this;
    }
    const TilingKernelFunc &npuemu_tiling() const { return tiling_; }
    const std::function<uint32_t(gert::TilingParseContext *)> &npuemu_parse() const { return parse_; }
    const std::vector<std::pair<std::string, OpAICoreConfig>> &npuemu_configs() const { return configs_; }

private:
    TilingKernelFunc tiling_;
    std::function<uint32_t(gert::TilingParseContext *)> parse_;
    std::vector<std::pair<std::string, OpAICoreConfig>> configs_;
};

class OpMC2Def {
public:
    OpMC2Def &HcclGroup(const char *) { return *this; }
    OpMC2Def &HcclGroup(std::vector<const char *>) { return *this; }
};

class OpDef {
public:
    explicit OpDef(const char *type) : type_(type ? type : "") {}
    virtual ~OpDef() = default;
    OpParamDef &Input(const char *name) { return inputs_.get(name); }
    OpParamDef &Output(const char *name) { return outputs_.get(name); }
    OpAttrDef &Attr(const char *name)
    {
        for (auto &a : attrs_) {
            if (a.npuemu_name() == name) {
                return a;
            }
        }
        attrs_.emplace_back(name);
        return attrs_.back();
    }
    template <class F> OpDef &SetInferShape(F f)
    {
        infer_shape_ = [f](gert::InferShapeContext *c) { return static_cast<uint32_t>(f(c)); };
        return *this;
    }
    template <class F> OpDef &SetInferShapeRange(F) { return *this; }
    template <class F> OpDef &SetInferDataType(F f)
    {
        infer_dtype_ = [f](gert::InferDataTypeContext *c) { return static_cast<uint32_t>(f(c)); };
        return *this;
    }
    template <class F> OpDef &SetInferValueRange(F) { return *this; }
    OpAICoreDef &AICore() { return aicore_; }
    OpMC2Def &MC2() { return mc2_; }
    OpDef &Comment(const char *) { return *this; }
    OpDef &EnableFallBack() { return *this; }

    const std::string &npuemu_type() const { return type_; }
    /* The inputs / outputs of the emulated SoC's configuration when it declares any. */
    const std::vector<OpParamDef> &npuemu_inputs() const
    {
        const OpAICoreConfig *c = npuemu_config();
        return (c && !c->npuemu_inputs().all().empty()) ? c->npuemu_inputs().all() : inputs_.all();
    }
    const std::vector<OpParamDef> &npuemu_outputs() const
    {
        const OpAICoreConfig *c = npuemu_config();
        return (c && !c->npuemu_outputs().all().empty()) ? c->npuemu_outputs().all() : outputs_.all();
    }
    const std::vector<OpAttrDef> &npuemu_attrs() const { return attrs_; }
    const OpAICoreDef &npuemu_aicore() const { return aicore_; }
    const InferShapeKernelFunc &npuemu_infer_shape() const { return infer_shape_; }
    const InferDataTypeKernelFunc &npuemu_infer_dtype() const { return infer_dtype_; }
    const OpAICoreConfig *npuemu_config() const
    {
        for (const auto &c : aicore_.npuemu_configs()) {
            if (c.first == "ascend910b") {
                return &c.second;
            }
        }
        return nullptr;
    }
    std::shared_ptr<void> npuemu_compile_info;

private:
    std::string type_;
    NpuemuParams inputs_;
    NpuemuParams outputs_;
    std::vector<OpAttrDef> attrs_;
    OpAICoreDef aicore_;
    OpMC2Def mc2_;
    InferShapeKernelFunc infer_shape_;
    InferDataTypeKernelFunc infer_dtype_;
};

} // namespace ops

#endif /* NPUEMU_REGISTER_OP_DEF_H */
