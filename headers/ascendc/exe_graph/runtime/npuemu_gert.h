/* npu-emu: the gert contexts an operator's op_host code receives (the headers
 * exe_graph/runtime/{tiling_context,infer_shape_context,infer_datatype_context,shape,storage_shape,
 * tensor,runtime_attrs,tiling_data,continuous_vector}.h all include this file).
 *
 * Who fills them: the aclnn API that `op_build` generates for a custom operator
 * (register/npuemu_op_runtime.h). A context describes one call: the tensors of the call (shapes,
 * data types, formats, device addresses), the attributes in declaration order, and the tiling
 * results (block dim, tiling key, tiling data, workspace sizes) the tiling function sets.
 *
 * Indices: GetInputShape / GetInputTensor / GetInputDesc take the index of the input instance
 * (an absent optional input has no instance, so the later ones move up, as in CANN);
 * GetOptionalInput* take the index of the input in the OpDef (nullptr when absent). */
#ifndef NPUEMU_EXE_GRAPH_GERT_H
#define NPUEMU_EXE_GRAPH_GERT_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "graph/ge_error_codes.h"
#include "graph/types.h"

namespace fe {
/* The platform information of a tiling context (GetPlatformInfo): the emulated SoC. */
class PlatFormInfos {
public:
    std::string soc = "Ascend910B1";
};
} // namespace fe

namespace gert {

class Shape {
public:
    static constexpr size_t kMaxDimNum = 25;
    Shape() = default;
    Shape(std::initializer_list<int64_t> dims) : dims_(dims) {}
    explicit Shape(const std::vector<int64_t> &dims) : dims_(dims) {}
    size_t GetDimNum() const { return dims_.size(); }
    void SetDimNum(size_t n) { dims_.resize(n, 0); }
    int64_t GetDim(size_t i) const { return i < dims_.size() ? dims_[i] : 0; }
    void SetDim(size_t i, int64_t v)
    {
        if (i < dims_.size()) {
            dims_[i] = v;
        }
    }
    Shape &AppendDim(int64_t v)
    {
        dims_.push_back(v);
        return *this;
    }
    bool IsScalar() const { return dims_.empty(); }
    void SetScalar() { dims_.clear(); }
    /* The number of elements (1 for a scalar). */
    int64_t GetShapeSize() const
    {
        int64_t n = 1;
        for (int64_t d : dims_) {
            n *= d;
        }
        return n;
    }
    int64_t operator[](size_t i) const { return GetDim(i); }
    int64_t &operator[](size_t i) { return dims_[i]; }
    bool operator==(const Shape &o) const { return dims_ == o.dims_; }
    bool operator!=(const Shape &o) const { return dims_ != o.dims_; }
    const std::vector<int64_t> &npuemu_dims() const { return dims_; }

private:
    std::vector<int64_t> dims_;
};

class StorageShape {
public:
    StorageShape() = default;
    StorageShape(std::initializer_list<int64_t> origin, std::initializer_list<int64_t> storage)
        : origin_(origin), storage_(storage) {}
    StorageShape(const Shape &origin, const Shape &storage) : origin_(origin), storage_(storage) {}
    const Shape &GetOriginShape() const { return origin_; }
    const Shape &GetStorageShape() const { return storage_; }
    Shape &MutableOriginShape() { return origin_; }
    Shape &MutableStorageShape() { return storage_; }
    bool operator==(const StorageShape &o) const { return origin_ == o.origin_ && storage_ == o.storage_; }

private:
    Shape origin_;
    Shape storage_;
};

class StorageFormat {
public:
    StorageFormat() = default;
    StorageFormat(ge::Format origin, ge::Format storage) : origin_(origin), storage_(storage) {}
    ge::Format GetOriginFormat() const { return origin_; }
    ge::Format GetStorageFormat() const { return storage_; }
    void SetOriginFormat(ge::Format f) { origin_ = f; }
    void SetStorageFormat(ge::Format f) { storage_ = f; }

private:
    ge::Format origin_ = ge::FORMAT_ND;
    ge::Format storage_ = ge::FORMAT_ND;
};

/* The data type and format of an input or output (GetInputDesc / GetOutputDesc). */
class CompileTimeTensorDesc {
public:
    ge::DataType GetDataType() const { return dtype_; }
    ge::Format GetOriginFormat() const { return format_.GetOriginFormat(); }
    ge::Format GetStorageFormat() const { return format_.GetStorageFormat(); }
    const StorageFormat &GetFormat() const { return format_; }
    void SetDataType(ge::DataType t) { dtype_ = t; }
    void SetOriginFormat(ge::Format f) { format_.SetOriginFormat(f); }
    void SetStorageFormat(ge::Format f) { format_.SetStorageFormat(f); }

private:
    ge::DataType dtype_ = ge::DT_UNDEFINED;
    StorageFormat format_;
};

enum class TensorPlacement { kOnDeviceHbm, kOnHost, kFollowing, kOnDeviceP2p, kTensorPlacementEnd };

/* An input as the tiling function sees it: shapes, data type, format and the device address
 * (the data stay in device memory; GetData<T>() of a device tensor is the device pointer). */
class Tensor {
public:
    int64_t GetShapeSize() const { return shape_.GetStorageShape().GetShapeSize(); }
    const StorageShape &GetShape() const { return shape_; }
    StorageShape &MutableShape() { return shape_; }
    const Shape &GetStorageShape() const { return shape_.GetStorageShape(); }
    const Shape &GetOriginShape() const { return shape_.GetOriginShape(); }
    ge::DataType GetDataType() const { return dtype_; }
    ge::Format GetStorageFormat() const { return format_.GetStorageFormat(); }
    ge::Format GetOriginFormat() const { return format_.GetOriginFormat(); }
    const StorageFormat &GetFormat() const { return format_; }
    TensorPlacement GetPlacement() const { return TensorPlacement::kOnDeviceHbm; }
    const void *GetAddr() const { return addr_; }
    void *GetAddr() { return addr_; }
    template <class T> const T *GetData() const { return static_cast<const T *>(addr_); }
    template <class T> T *GetData() { return static_cast<T *>(addr_); }
    size_t GetSize() const
    {
        return static_cast<size_t>(GetShapeSize()) * static_cast<size_t>(ge::GetSizeByDataType(dtype_));
    }
    void SetDataType(ge::DataType t) { dtype_ = t; }
    void SetStorageFormat(ge::Format f) { format_.SetStorageFormat(f); }
    void SetOriginFormat(ge::Format f) { format_.SetOriginFormat(f); }
    void SetAddr(void *a) { addr_ = a; }

private:
    StorageShape shape_;
    ge::DataType dtype_ = ge::DT_UNDEFINED;
    StorageFormat format_;
    void *addr_ = nullptr;
};

/* A list attribute as RuntimeAttrs holds it: the element count, then the elements. */
class ContinuousVector {
public:
    size_t GetSize() const { return size_; }
    size_t GetCapacity() const { return capacity_; }
    const void *GetData() const { return this + 1; }
    void *MutableData() { return this + 1; }
    ge::graphStatus SetSize(size_t n)
    {
        if (n > capacity_) {
            return ge::GRAPH_FAILED;
        }
        size_ = n;
        return ge::GRAPH_SUCCESS;
    }
private:
    size_t capacity_ = 0;
    size_t size_ = 0;
    friend class RuntimeAttrs;
    friend struct RuntimeAttrsBuilder;
};

template <class T>
class TypedContinuousVector : public ContinuousVector {
public:
    const T *GetData() const { return static_cast<const T *>(ContinuousVector::GetData()); }
    T *MutableData() { return static_cast<T *>(ContinuousVector::MutableData()); }
};

/* The attributes of the call in OpDef declaration order. */
class RuntimeAttrs {
public:
    template <class T> const T *GetAttrPointer(size_t i) const
    {
        return i < offsets_.size() ? reinterpret_cast<const T *>(bytes_.data() + offsets_[i]) : nullptr;
    }
    const int64_t *GetInt(size_t i) const { return GetAttrPointer<int64_t>(i); }
    const float *GetFloat(size_t i) const { return GetAttrPointer<float>(i); }
    const bool *GetBool(size_t i) const { return GetAttrPointer<bool>(i); }
    const char *GetStr(size_t i) const { return GetAttrPointer<char>(i); }
    const TypedContinuousVector<int64_t> *GetListInt(size_t i) const
    {
        return GetAttrPointer<TypedContinuousVector<int64_t>>(i);
    }
    const TypedContinuousVector<float> *GetListFloat(size_t i) const
    {
        return GetAttrPointer<TypedContinuousVector<float>>(i);
    }
    const TypedContinuousVector<bool> *GetListBool(size_t i) const
    {
        return GetAttrPointer<TypedContinuousVector<bool>>(i);
    }
    size_t GetAttrNum() const { return offsets_.size(); }

    /* Filling (the generated API). Each value starts 8-byte aligned. */
    void npuemu_add(const void *data, size_t n)
    {
        size_t off = (bytes_.size() + 7) & ~static_cast<size_t>(7);
        bytes_.resize(off + n + 8, 0);
        if (n > 0) {
            std::memcpy(bytes_.data() + off, data, n);
        }
        offsets_.push_back(off);
    }
    template <class T> void npuemu_add_list(const T *data, size_t count)
    {
        std::vector<uint8_t> b(sizeof(ContinuousVector) + count * sizeof(T) + 8, 0);
        ContinuousVector *v = reinterpret_cast<ContinuousVector *>(b.data());
        new (v) ContinuousVector();
        v->capacity_ = count;
        v->size_ = count;
        if (count > 0) {
            std::memcpy(v->MutableData(), data, count * sizeof(T));
        }
        npuemu_add(b.data(), b.size());
    }

private:
    std::vector<uint8_t> bytes_;
    std::vector<size_t> offsets_;
};

/* The tiling data buffer of a tiling context (GetRawTilingData). */
class TilingData {
public:
    explicit TilingData(size_t capacity = 64 * 1024) : buf_(capacity, 0) {}
    size_t GetCapacity() const { return buf_.size(); }
    size_t GetDataSize() const { return size_; }
    void SetDataSize(size_t n) { size_ = n <= buf_.size() ? n : buf_.size(); }
    void *GetData() { return buf_.data(); }
    const void *GetData() const { return buf_.data(); }
    template <class T> ge::graphStatus Append(const T &v)
    {
        if (size_ + sizeof(T) > buf_.size()) {
            return ge::GRAPH_FAILED;
        }
        std::memcpy(buf_.data() + size_, &v, sizeof(T));
        size_ += sizeof(T);
        return ge::GRAPH_SUCCESS;
    }
    template <class T> ge::graphStatus Append(const T *v, size_t n)
    {
        if (size_ + n * sizeof(T) > buf_.size()) {
            return ge::GRAPH_FAILED;
        }
        std::memcpy(buf_.data() + size_, v, n * sizeof(T));
        size_ += n * sizeof(T);
        return ge::GRAPH_SUCCESS;
    }

private:
    std::vector<uint8_t> buf_;
    size_t size_ = 0;
};

/* The node a context belongs to (GetComputeNodeInfo()). */
class ComputeNodeInfo {
public:
    const char *GetNodeType() const { return type_.c_str(); }
    const char *GetNodeName() const { return name_.c_str(); }
    size_t GetInputsNum() const { return ninputs_; }
    size_t GetOutputsNum() const { return noutputs_; }
    const RuntimeAttrs *GetAttrs() const { return attrs_; }
    const CompileTimeTensorDesc *GetInputTdInfo(size_t i) const { return i < in_.size() ? in_[i] : nullptr; }
    const CompileTimeTensorDesc *GetOutputTdInfo(size_t i) const { return i < out_.size() ? out_[i] : nullptr; }
    std::string type_, name_;
    size_t ninputs_ = 0, noutputs_ = 0;
    const RuntimeAttrs *attrs_ = nullptr;
    std::vector<const CompileTimeTensorDesc *> in_, out_;
};

/* One operator call: what every context reads (npu-emu's own layout). */
struct NpuemuCall {
    std::string op_type;
    /* Per OpDef input: the instance index of its first tensor (-1 when absent) and the count. */
    std::vector<int> ir_first;
    std::vector<size_t> ir_count;
    std::vector<Tensor> inputs; /* instances */
    std::vector<CompileTimeTensorDesc> input_descs;
    std::vector<StorageShape> input_shapes;
    std::vector<int> out_ir_first;
    std::vector<size_t> out_ir_count;
    std::vector<Tensor> outputs;
    std::vector<CompileTimeTensorDesc> output_descs;
    std::vector<StorageShape> output_shapes;
    RuntimeAttrs attrs;
    ComputeNodeInfo node;
    fe::PlatFormInfos platform;
    /* Tiling results. */
    uint32_t block_dim = 0;
    uint64_t tiling_key = 0;
    TilingData tiling;
    std::vector<size_t> workspaces;
    uint32_t schedule_mode = 0;
    bool need_atomic = false;
    const void *compile_info = nullptr;
    /* Infer-shape outputs. */
    std::vector<Shape> infer_out_shapes;
    std::vector<ge::DataType> infer_out_dtypes;

    int in_instance(size_t ir, size_t rel = 0) const
    {
        if (ir >= ir_first.size() || ir_first[ir] < 0 || rel >= ir_count[ir]) {
            return -1;
        }
        return ir_first[ir] + static_cast<int>(rel);
    }
    int out_instance(size_t ir, size_t rel = 0) const
    {
        if (ir >= out_ir_first.size() || out_ir_first[ir] < 0 || rel >= out_ir_count[ir]) {
            return -1;
        }
        return out_ir_first[ir] + static_cast<int>(rel);
    }
};

/* What every context has: the call it describes. */
class NpuemuContextBase {
public:
    explicit NpuemuContextBase(NpuemuCall *c) : call_(c) {}
    const RuntimeAttrs *GetAttrs() const { return &call_->attrs; }
    const ComputeNodeInfo *GetComputeNodeInfo() const { return &call_->node; }
    const char *GetNodeType() const { return call_->op_type.c_str(); }
    const char *GetNodeName() const { return call_->op_type.c_str(); }
    size_t GetComputeNodeInputNum() const { return call_->inputs.size(); }
    size_t GetComputeNodeOutputNum() const { return call_->outputs.size(); }
    const CompileTimeTensorDesc *GetInputDesc(size_t i) const
    {
        return i < call_->input_descs.size() ? &call_->input_descs[i] : nullptr;
    }
    const CompileTimeTensorDesc *GetOptionalInputDesc(size_t ir) const
    {
        int k = call_->in_instance(ir);
        return k < 0 ? nullptr : &call_->input_descs[k];
    }
    const CompileTimeTensorDesc *GetDynamicInputDesc(size_t ir, size_t rel) const
    {
        int k = call_->in_instance(ir, rel);
        return k < 0 ? nullptr : &call_->input_descs[k];
    }
    const CompileTimeTensorDesc *GetOutputDesc(size_t i) const
    {
        return i < call_->output_descs.size() ? &call_->output_descs[i] : nullptr;
    }
    NpuemuCall *npuemu_call() const { return call_; }

protected:
    NpuemuCall *call_;
};

class TilingContext : public NpuemuContextBase {
public:
    using NpuemuContextBase::NpuemuContextBase;
    const StorageShape *GetInputShape(size_t i) const
    {
        return i < call_->input_shapes.size() ? &call_->input_shapes[i] : nullptr;
    }
    const StorageShape *GetOptionalInputShape(size_t ir) const
    {
        int k = call_->in_instance(ir);
        return k < 0 ? nullptr : &call_->input_shapes[k];
    }
    const StorageShape *GetDynamicInputShape(size_t ir, size_t rel) const
    {
        int k = call_->in_instance(ir, rel);
        return k < 0 ? nullptr : &call_->input_shapes[k];
    }
    const StorageShape *GetOutputShape(size_t i) const
    {
        return i < call_->output_shapes.size() ? &call_->output_shapes[i] : nullptr;
    }
    const Tensor *GetInputTensor(size_t i) const { return i < call_->inputs.size() ? &call_->inputs[i] : nullptr; }
    const Tensor *GetOptionalInputTensor(size_t ir) const
    {
        int k = call_->in_instance(ir);
        return k < 0 ? nullptr : &call_->inputs[k];
    }
    const Tensor *GetDynamicInputTensor(size_t ir, size_t rel) const
    {
        int k = call_->in_instance(ir, rel);
        return k < 0 ? nullptr : &call_->inputs[k];
    }
    ge::graphStatus SetBlockDim(uint32_t n)
    {
        call_->block_dim = n;
        return ge::GRAPH_SUCCESS;
    }
    uint32_t GetBlockDim() const { return call_->block_dim; }
    ge::graphStatus SetTilingKey(uint64_t k)
    {
        call_->tiling_key = k;
        return ge::GRAPH_SUCCESS;
    }
    uint64_t GetTilingKey() const { return call_->tiling_key; }
    TilingData *GetRawTilingData() { return &call_->tiling; }
    template <class T> T *GetTilingData()
    {
        if (call_->tiling.GetCapacity() < sizeof(T)) {
            return nullptr;
        }
        if (call_->tiling.GetDataSize() < sizeof(T)) {
            call_->tiling.SetDataSize(sizeof(T));
        }
        return static_cast<T *>(call_->tiling.GetData());
    }
    /* `n` workspace sizes, set to 0 the first time; the sum is the call's workspace size. */
    size_t *GetWorkspaceSizes(size_t n)
    {
        if (call_->workspaces.size() < n) {
            call_->workspaces.resize(n, 0);
        }
        return n == 0 ? nullptr : call_->workspaces.data();
    }
    size_t GetWorkspaceNum() const { return call_->workspaces.size(); }
    fe::PlatFormInfos *GetPlatformInfo() const { return &call_->platform; }
    template <class T> const T *GetCompileInfo() const { return static_cast<const T *>(call_->compile_info); }
    ge::graphStatus SetScheduleMode(uint32_t m)
    {
        call_->schedule_mode = m;
        return ge::GRAPH_SUCCESS;
    }
    uint32_t GetScheduleMode() const { return call_->schedule_mode; }
    ge::graphStatus SetNeedAtomic(bool a)
    {
        call_->need_atomic = a;
        return ge::GRAPH_SUCCESS;
    }
    bool NeedAtomic() const { return call_->need_atomic; }
    int32_t GetDeterministic() const { return 0; }
    ge::graphStatus SetTilingCond(int32_t) { return ge::GRAPH_SUCCESS; }
    ge::graphStatus SetAicpuBlockDim(uint32_t) { return ge::GRAPH_SUCCESS; }
    ge::graphStatus SetLocalMemorySize(uint32_t) { return ge::GRAPH_SUCCESS; }
};

class InferShapeContext : public NpuemuContextBase {
public:
    using NpuemuContextBase::NpuemuContextBase;
    const Shape *GetInputShape(size_t i) const
    {
        return i < call_->input_shapes.size() ? &call_->input_shapes[i].GetOriginShape() : nullptr;
    }
    const Shape *GetOptionalInputShape(size_t ir) const
    {
        int k = call_->in_instance(ir);
        return k < 0 ? nullptr : &call_->input_shapes[k].GetOriginShape();
    }
    const Shape *GetDynamicInputShape(size_t ir, size_t rel) const
    {
        int k = call_->in_instance(ir, rel);
        return k < 0 ? nullptr : &call_->input_shapes[k].GetOriginShape();
    }
    const Tensor *GetInputTensor(size_t i) const { return i < call_->inputs.size() ? &call_->inputs[i] : nullptr; }
    const Tensor *GetOptionalInputTensor(size_t ir) const
    {
        int k = call_->in_instance(ir);
        return k < 0 ? nullptr : &call_->inputs[k];
    }
    Shape *GetOutputShape(size_t i)
    {
        if (call_->infer_out_shapes.size() < call_->outputs.size()) {
            call_->infer_out_shapes.resize(call_->outputs.size());
        }
        return i < call_->infer_out_shapes.size() ? &call_->infer_out_shapes[i] : nullptr;
    }
};

/* A shape range (InferShapeRange): npu-emu shapes are static, so min == max == the shape. */
template <class T> class Range {
public:
    Range() = default;
    Range(T *min, T *max) : min_(min), max_(max) {}
    const T *GetMin() const { return min_; }
    const T *GetMax() const { return max_; }
    T *GetMin() { return min_; }
    T *GetMax() { return max_; }
    void SetMin(T *m) { min_ = m; }
    void SetMax(T *m) { max_ = m; }
    Range &operator=(const Range &o)
    {
        if (this != &o && min_ && max_ && o.min_ && o.max_) {
            *min_ = *o.min_;
            *max_ = *o.max_;
        }
        return *this;
    }

private:
    T *min_ = nullptr;
    T *max_ = nullptr;
};

class InferShapeRangeContext : public NpuemuContextBase {
public:
    explicit InferShapeRangeContext(NpuemuCall *c) : NpuemuContextBase(c)
    {
        for (auto &s : c->input_shapes) {
            in_min_.push_back(s.GetOriginShape());
        }
        in_max_ = in_min_;
        out_min_.resize(c->outputs.size());
        out_max_.resize(c->outputs.size());
        for (size_t i = 0; i < in_min_.size(); ++i) {
            in_.emplace_back(&in_min_[i], &in_max_[i]);
        }
        for (size_t i = 0; i < out_min_.size(); ++i) {
            out_.emplace_back(&out_min_[i], &out_max_[i]);
        }
    }
    const Range<Shape> *GetInputShapeRange(size_t i) const { return i < in_.size() ? &in_[i] : nullptr; }
    const Range<Shape> *GetOptionalInputShapeRange(size_t ir) const
    {
        int k = call_->in_instance(ir);
        return k < 0 ? nullptr : &in_[k];
    }
    Range<Shape> *GetOutputShapeRange(size_t i) { return i < out_.size() ? &out_[i] : nullptr; }

private:
    std::vector<Shape> in_min_, in_max_, out_min_, out_max_;
    std::vector<Range<Shape>> in_, out_;
};

class InferDataTypeContext : public NpuemuContextBase {
public:
    using NpuemuContextBase::NpuemuContextBase;
    ge::DataType GetInputDataType(size_t i) const
    {
        return i < call_->input_descs.size() ? call_->input_descs[i].GetDataType() : ge::DT_UNDEFINED;
    }
    ge::DataType GetOptionalInputDataType(size_t ir) const
    {
        int k = call_->in_instance(ir);
        return k < 0 ? ge::DT_UNDEFINED : call_->input_descs[k].GetDataType();
    }
    ge::DataType GetDynamicInputDataType(size_t ir, size_t rel) const
    {
        int k = call_->in_instance(ir, rel);
        return k < 0 ? ge::DT_UNDEFINED : call_->input_descs[k].GetDataType();
    }
    ge::DataType GetOutputDataType(size_t i) const
    {
        return i < call_->infer_out_dtypes.size() ? call_->infer_out_dtypes[i] : ge::DT_UNDEFINED;
    }
    ge::graphStatus SetOutputDataType(size_t i, ge::DataType t)
    {
        if (call_->infer_out_dtypes.size() < call_->outputs.size()) {
            call_->infer_out_dtypes.resize(call_->outputs.size(), ge::DT_UNDEFINED);
        }
        if (i >= call_->infer_out_dtypes.size()) {
            return ge::GRAPH_FAILED;
        }
        call_->infer_out_dtypes[i] = t;
        return ge::GRAPH_SUCCESS;
    }
};

/* TilingParse: the compile info object of OP_ADD(Op, CompileInfo) / TilingParse<CompileInfo>. */
class TilingParseContext {
public:
    TilingParseContext(void *ci, fe::PlatFormInfos *p, const char *type) : ci_(ci), p_(p), type_(type) {}
    template <class T> T *GetCompiledInfo() { return static_cast<T *>(ci_); }
    const char *GetCompiledJson() const { return "{}"; }
    fe::PlatFormInfos *GetPlatformInfo() const { return p_; }
    const char *GetNodeType() const { return type_; }
    const char *GetNodeName() const { return type_; }

private:
    void *ci_;
    fe::PlatFormInfos *p_;
    const char *type_;
};

} // namespace gert

#endif /* NPUEMU_EXE_GRAPH_GERT_H */
