/* npu-emu: what the aclnn API generated for a custom operator (`op_build`, aclnn_<op>.cpp) runs.
 *
 *   aclnnXxxGetWorkspaceSize(inputs..., outputs..., attrs..., &workspaceSize, &executor)
 *     1. a NULL required tensor (or output, or the two out pointers): ACLNN_ERR_PARAM_NULLPTR
 *        (161001) naming the operator API and the argument;
 *     2. the data type and format of each tensor against the OpDef's DataType / Format columns
 *        (the emulated SoC's AddConfig("ascend910b", cfg) lists when given): a combination the
 *        OpDef does not declare is ACLNN_ERR_PARAM_INVALID (161002), naming the argument, its
 *        data type and the ones the OpDef allows there;
 *     3. the tiling function (OpDef AICore().SetTiling, else IMPL_OP_OPTILING) with a
 *        gert::TilingContext of the call (TilingParse first, once, for the compile info); a
 *        result other than GRAPH_SUCCESS, or no block dim set, is ACLNN_ERR_INNER (561000);
 *     4. *workspaceSize = the sum of the sizes the tiling set (GetWorkspaceSizes).
 *   aclnnXxx(workspace, workspaceSize, executor, stream)
 *     launches the operator's kernel (the kernel binary `<kernel>.o` that the project built,
 *     found at op_impl/ai_core/tbe/kernel/ascend910b/<kernel>/ next to this library's op_api
 *     directory) with the block dim and the tiling key the tiling set, the tensors' device
 *     addresses, then the workspace and the tiling data, through aclrtBinaryGetFunctionByEntry
 *     (the entry is the tiling key: TILING_KEY_IS) and aclrtLaunchKernelWithHostArgs (the
 *     tiling data is copied to device memory at the launch). The executor is used once.
 *
 * List attributes (aclIntArray / aclFloatArray / aclBoolArray) reach the tiling as
 * gert::TypedContinuousVector (GetListInt / GetAttrPointer<gert::ContinuousVector>); a NULL
 * array for a REQUIRED one is 161001, for an OPTIONAL one an empty list.
 * Not supported: dynamic (tensor-list) inputs and ListListInt attributes (op_build refuses them). */
#ifndef NPUEMU_REGISTER_OP_RUNTIME_H
#define NPUEMU_REGISTER_OP_RUNTIME_H

#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "aclnn/acl_meta.h"
#include "register/op_def_registry.h"

extern "C" const void *npuemu_runtime_api(void);
/* libnnopbase (npu-emu): the values of the aclnn arrays (list attributes). */
extern "C" int32_t npuemu_aclnn_int_array(const aclIntArray *a, int64_t *values, uint64_t cap, uint64_t *size);
extern "C" int32_t npuemu_aclnn_float_array(const aclFloatArray *a, float *values, uint64_t cap, uint64_t *size);
extern "C" int32_t npuemu_aclnn_bool_array(const aclBoolArray *a, bool *values, uint64_t cap, uint64_t *size);

namespace npuemu {
namespace opapi {

constexpr aclnnStatus PARAM_NULLPTR = 161001;
constexpr aclnnStatus PARAM_INVALID = 161002;
constexpr aclnnStatus INNER = 561000;
constexpr uint64_t EXEC_MAGIC = 0x6e70756f70617069ULL; /* "npuopapi" */

/* The leading part of libascendcl's runtime table (npu-emu/ffi/src/rtapi.rs, RtApi). */
struct RtApiHead {
    uint32_t version;
    void *current_device, *logical_to_physical, *enqueue, *synchronize, *translate, *phys_to_host;
    void (*set_error)(const uint8_t *, size_t);
    void *stream_id;
    void (*set_error_module)(const uint8_t *, size_t, const uint8_t *, size_t);
};

/* Keep `msg` for aclGetRecentErrMsg (logged under OP) and return `code`. */
inline aclnnStatus fail(aclnnStatus code, const std::string &msg)
{
    const RtApiHead *rt = static_cast<const RtApiHead *>(npuemu_runtime_api());
    if (rt != nullptr && rt->version >= 2 && rt->set_error_module != nullptr) {
        rt->set_error_module(reinterpret_cast<const uint8_t *>("OP"), 2,
                             reinterpret_cast<const uint8_t *>(msg.data()), msg.size());
    } else if (rt != nullptr && rt->set_error != nullptr) {
        rt->set_error(reinterpret_cast<const uint8_t *>(msg.data()), msg.size());
    } else {
        std::fprintf(stderr, "[ERROR] OP: %s\n", msg.c_str());
    }
    return code;
}

struct Exec {
    uint64_t magic = EXEC_MAGIC;
    std::string api, op, kernel, bin_path;
    uint32_t block_dim = 0;
    uint64_t tiling_key = 0;
    std::vector<void *> ptrs; /* inputs, outputs */
    std::vector<uint8_t> tiling;
    uint64_t workspace = 0;
};

/* The executors GetWorkspaceSize made and no execute has consumed yet. */
inline std::mutex &exec_mutex()
{
    static std::mutex m;
    return m;
}
inline std::set<const void *> &live_execs()
{
    static std::set<const void *> s;
    return s;
}

/* This library's directory (the op_api/lib of the installed package). */
static inline void npuemu_opapi_anchor() {}
inline std::string lib_dir()
{
    Dl_info info;
    std::memset(&info, 0, sizeof info);
    if (dladdr(reinterpret_cast<void *>(&npuemu_opapi_anchor), &info) == 0 || info.dli_fname == nullptr) {
        return ".";
    }
    std::string p = info.dli_fname;
    size_t s = p.rfind('/');
    return s == std::string::npos ? "." : p.substr(0, s);
}

/* Declared ND accepts the plain layouts an aclTensor is created with. */
inline bool format_ok(int declared, int actual)
{
    declared &= 0xff;
    actual &= 0xff;
    if (declared == actual) {
        return true;
    }
    auto plain = [](int f) {
        return f == ge::FORMAT_ND || f == ge::FORMAT_NCHW || f == ge::FORMAT_NHWC || f == ge::FORMAT_NCDHW ||
               f == ge::FORMAT_NDHWC || f == ge::FORMAT_NCL || f == ge::FORMAT_NC || f == ge::FORMAT_HWCN;
    };
    return (declared == ge::FORMAT_ND && plain(actual)) || (actual == ge::FORMAT_ND && plain(declared));
}

class Call {
public:
    Call(const char *op, const char *api, const char *kernel) : op_(op), api_(api), kernel_(kernel) {}

    void input(const aclTensor *t, const char *name) { in_.push_back({t, name}); }
    void output(const aclTensor *t, const char *name) { out_.push_back({t, name}); }
    void attr_int(int64_t v) { call_.attrs.npuemu_add(&v, sizeof v); }
    void attr_float(double v)
    {
        float f = static_cast<float>(v);
        call_.attrs.npuemu_add(&f, sizeof f);
    }
    void attr_bool(bool v) { call_.attrs.npuemu_add(&v, sizeof v); }
    void attr_str(const char *v)
    {
        std::string s = v ? v : "";
        call_.attrs.npuemu_add(s.c_str(), s.size() + 1);
    }

    template <class A, class T>
    void attr_list(const A *a, const char *name, bool required,
                   int32_t (*get)(const A *, T *, uint64_t, uint64_t *))
    {
        std::unique_ptr<T[]> v;
        uint64_t n = 0;
        if (a == nullptr) {
            if (required && attr_error_.empty()) {
                attr_error_ = name;
            }
        } else if (get(a, nullptr, 0, &n) != 0) {
            n = 0;
            if (attr_error_.empty()) {
                attr_error_ = name;
            }
        } else if (n > 0) {
            v.reset(new T[n]);
            (void)get(a, v.get(), n, &n);
        }
        call_.attrs.npuemu_add_list(v.get(), static_cast<size_t>(n));
    }
    void attr_list_int(const aclIntArray *a, const char *name, bool required)
    {
        attr_list<aclIntArray, int64_t>(a, name, required, npuemu_aclnn_int_array);
    }
    void attr_list_float(const aclFloatArray *a, const char *name, bool required)
    {
        attr_list<aclFloatArray, float>(a, name, required, npuemu_aclnn_float_array);
    }
    void attr_list_bool(const aclBoolArray *a, const char *name, bool required)
    {
        attr_list<aclBoolArray, bool>(a, name, required, npuemu_aclnn_bool_array);
    }

    aclnnStatus prepare(uint64_t *workspace_size, aclOpExecutor **executor)
    {
        if (!attr_error_.empty()) {
            return fail(PARAM_NULLPTR, api_ + "GetWorkspaceSize: check param " + attr_error_ + " failed: the attribute " +
                                           attr_error_ + " of " + op_ + " is nullptr or not a valid array");
        }
        ops::OpDef *def = npuemu::find_op(op_);
        if (def == nullptr) {
            return fail(INNER, api_ + "GetWorkspaceSize: the operator " + op_ + " is not registered (OP_ADD)");
        }
        const auto &ins = def->npuemu_inputs();
        const auto &outs = def->npuemu_outputs();
        if (ins.size() != in_.size() || outs.size() != out_.size()) {
            return fail(INNER, api_ + "GetWorkspaceSize: the generated API does not match the OpDef of " + op_ +
                                   " (rebuild the operator package)");
        }
        for (size_t i = 0; i < in_.size(); ++i) {
            if (in_[i].t == nullptr && ins[i].npuemu_option() != ops::OPTIONAL) {
                return fail(PARAM_NULLPTR, api_ + "GetWorkspaceSize: check param " + in_[i].name +
                                               " failed: the required input " + in_[i].name + " of " + op_ +
                                               " is nullptr");
            }
        }
        for (size_t i = 0; i < out_.size(); ++i) {
            if (out_[i].t == nullptr && outs[i].npuemu_option() != ops::OPTIONAL) {
                return fail(PARAM_NULLPTR, api_ + "GetWorkspaceSize: check param " + out_[i].name +
                                               " failed: the output " + out_[i].name + " of " + op_ + " is nullptr");
            }
        }
        if (workspace_size == nullptr) {
            return fail(PARAM_NULLPTR, api_ + "GetWorkspaceSize: workspaceSize is nullptr");
        }
        if (executor == nullptr) {
            return fail(PARAM_NULLPTR, api_ + "GetWorkspaceSize: executor is nullptr");
        }
        /* The tensors as the contexts see them. */
        Exec ex;
        call_.op_type = op_;
        for (size_t i = 0; i < in_.size(); ++i) {
            if (in_[i].t == nullptr) {
                call_.ir_first.push_back(-1);
                call_.ir_count.push_back(0);
                ex.ptrs.push_back(nullptr);
                continue;
            }
            call_.ir_first.push_back(static_cast<int>(call_.inputs.size()));
            call_.ir_count.push_back(1);
            void *addr = nullptr;
            aclnnStatus rc = describe(in_[i], &addr, call_.inputs, call_.input_descs, call_.input_shapes);
            if (rc != 0) {
                return rc;
            }
            ex.ptrs.push_back(addr);
        }
        for (size_t i = 0; i < out_.size(); ++i) {
            if (out_[i].t == nullptr) {
                call_.out_ir_first.push_back(-1);
                call_.out_ir_count.push_back(0);
                ex.ptrs.push_back(nullptr);
                continue;
            }
            call_.out_ir_first.push_back(static_cast<int>(call_.outputs.size()));
            call_.out_ir_count.push_back(1);
            void *addr = nullptr;
            aclnnStatus rc = describe(out_[i], &addr, call_.outputs, call_.output_descs, call_.output_shapes);
            if (rc != 0) {
                return rc;
            }
            ex.ptrs.push_back(addr);
        }
        aclnnStatus rc = check_types(ins, outs);
        if (rc != 0) {
            return rc;
        }
        call_.node.type_ = op_;
        call_.node.name_ = op_;
        call_.node.ninputs_ = call_.inputs.size();
        call_.node.noutputs_ = call_.outputs.size();
        call_.node.attrs_ = &call_.attrs;
        for (auto &d : call_.input_descs) {
            call_.node.in_.push_back(&d);
        }
        for (auto &d : call_.output_descs) {
            call_.node.out_.push_back(&d);
        }
        /* Tiling. */
        npuemu::OpImplFuncs *impl = nullptr;
        auto it = npuemu::impl_registry().find(op_);
        if (it != npuemu::impl_registry().end()) {
            impl = &it->second;
        }
        std::function<uint32_t(gert::TilingContext *)> tiling = def->npuemu_aicore().npuemu_tiling();
        if (!tiling && impl != nullptr) {
            tiling = impl->tiling;
        }
        if (!tiling) {
            return fail(INNER, api_ + "GetWorkspaceSize: the operator " + op_ +
                                   " has no tiling function (OpDef AICore().SetTiling or IMPL_OP_OPTILING)");
        }
        call_.compile_info = compile_info(def, impl);
        gert::TilingContext ctx(&call_);
        uint32_t st = tiling(&ctx);
        if (st != ge::GRAPH_SUCCESS) {
            return fail(INNER, api_ + "GetWorkspaceSize: the tiling function of " + op_ + " failed (returned " +
                                   std::to_string(st) + ")");
        }
        if (call_.block_dim == 0) {
            return fail(INNER, api_ + "GetWorkspaceSize: the tiling function of " + op_ +
                                   " set no block dim (SetBlockDim)");
        }
        if (call_.block_dim > 65535) {
            return fail(INNER, api_ + "GetWorkspaceSize: the tiling function of " + op_ + " set block dim " +
                                   std::to_string(call_.block_dim) + " (at most 65535)");
        }
        uint64_t ws = 0;
        for (size_t w : call_.workspaces) {
            ws += w;
        }
        ex.api = api_;
        ex.op = op_;
        ex.kernel = kernel_;
        ex.bin_path = lib_dir() + "/../../op_impl/ai_core/tbe/kernel/ascend910b/" + kernel_ + "/" + kernel_ + ".o";
        ex.block_dim = call_.block_dim;
        ex.tiling_key = call_.tiling_key;
        const uint8_t *td = static_cast<const uint8_t *>(call_.tiling.GetData());
        ex.tiling.assign(td, td + call_.tiling.GetDataSize());
        ex.workspace = ws;
        *workspace_size = ws;
        Exec *made = new Exec(ex);
        {
            std::lock_guard<std::mutex> g(exec_mutex());
            live_execs().insert(made);
        }
        *executor = reinterpret_cast<aclOpExecutor *>(made);
        return 0;
    }

private:
    struct Arg {
        const aclTensor *t;
        const char *name;
    };

    aclnnStatus describe(const Arg &a, void **addr, std::vector<gert::Tensor> &ts,
                         std::vector<gert::CompileTimeTensorDesc> &descs, std::vector<gert::StorageShape> &shapes)
    {
        int64_t *view = nullptr, *storage = nullptr;
        uint64_t nview = 0, nstorage = 0;
        int32_t dtype = 0, format = 0;
        int64_t offset = 0;
        void *raw = nullptr;
        if (aclGetViewShape(a.t, &view, &nview) != 0 || aclGetStorageShape(a.t, &storage, &nstorage) != 0 ||
            aclGetDataType(a.t, reinterpret_cast<aclDataType *>(&dtype)) != 0 ||
            aclGetFormat(a.t, reinterpret_cast<aclFormat *>(&format)) != 0 || aclGetViewOffset(a.t, &offset) != 0 ||
            aclGetRawTensorAddr(a.t, &raw) != 0) {
            delete[] view;
            delete[] storage;
            return fail(PARAM_INVALID, api_ + "GetWorkspaceSize: " + a.name + " is not a valid aclTensor");
        }
        int64_t *strides = nullptr;
        uint64_t nstrides = 0;
        if (aclGetViewStrides(a.t, &strides, &nstrides) == 0) {
            bool contiguous = nstrides == nview;
            int64_t expect = 1;
            for (uint64_t i = nview; contiguous && i > 0; --i) {
                if (view[i - 1] != 1 && strides[i - 1] != expect) {
                    contiguous = false;
                }
                expect *= view[i - 1];
            }
            delete[] strides;
            if (!contiguous) {
                delete[] view;
                delete[] storage;
                return fail(PARAM_INVALID, api_ + "GetWorkspaceSize: " + a.name +
                                               " is not contiguous (its view strides are not those of its shape); "
                                               "npu-emu passes custom operators contiguous tensors only");
            }
        }
        gert::Shape vs(std::vector<int64_t>(view, view + nview));
        gert::Shape ss(std::vector<int64_t>(storage, storage + nstorage));
        delete[] view;
        delete[] storage;
        gert::Tensor t;
        t.MutableShape() = gert::StorageShape(vs, vs);
        t.SetDataType(static_cast<ge::DataType>(dtype));
        t.SetOriginFormat(static_cast<ge::Format>(format));
        t.SetStorageFormat(static_cast<ge::Format>(format));
        int es = ge::GetSizeByDataType(static_cast<ge::DataType>(dtype));
        *addr = raw == nullptr ? nullptr : static_cast<uint8_t *>(raw) + offset * (es > 0 ? es : 1);
        t.SetAddr(*addr);
        (void)ss;
        gert::CompileTimeTensorDesc d;
        d.SetDataType(static_cast<ge::DataType>(dtype));
        d.SetOriginFormat(static_cast<ge::Format>(format));
        d.SetStorageFormat(static_cast<ge::Format>(format));
        ts.push_back(t);
        descs.push_back(d);
        shapes.push_back(gert::StorageShape(vs, vs));
        return 0;
    }

    /* Narrow the OpDef's columns tensor by tensor; the first tensor that leaves none is named. */
    aclnnStatus check_types(const std::vector<ops::OpParamDef> &ins, const std::vector<ops::OpParamDef> &outs)
    {
        size_t ncols = 0;
        for (const auto *ps : {&ins, &outs}) {
            for (const auto &p : *ps) {
                if (!p.npuemu_type_list() && p.npuemu_types().size() > ncols) {
                    ncols = p.npuemu_types().size();
                }
            }
        }
        if (ncols == 0) {
            ncols = 1;
        }
        std::vector<bool> alive(ncols, true);
        auto check = [&](const ops::OpParamDef &p, const gert::CompileTimeTensorDesc &d,
                         const char *name) -> aclnnStatus {
            const auto &ty = p.npuemu_types();
            const auto &fm = p.npuemu_formats();
            std::vector<bool> next(ncols, false);
            bool any = false;
            std::vector<int> allowed;
            for (size_t k = 0; k < ncols; ++k) {
                if (!alive[k]) {
                    continue;
                }
                bool tok;
                if (ty.empty()) {
                    tok = true;
                } else if (p.npuemu_type_list()) {
                    tok = false;
                    for (auto x : ty) {
                        tok = tok || x == d.GetDataType();
                    }
                } else {
                    tok = k < ty.size() && ty[k] == d.GetDataType();
                    if (k < ty.size()) {
                        allowed.push_back(ty[k]);
                    }
                }
                if (p.npuemu_type_list()) {
                    for (auto x : ty) {
                        allowed.push_back(x);
                    }
                }
                bool fok;
                if (fm.empty()) {
                    fok = true;
                } else if (p.npuemu_format_list() || fm.size() == 1) {
                    fok = false;
                    for (auto x : fm) {
                        fok = fok || format_ok(x, d.GetStorageFormat());
                    }
                } else {
                    fok = k < fm.size() && format_ok(fm[k], d.GetStorageFormat());
                }
                next[k] = tok && fok;
                any = any || next[k];
            }
            if (!any) {
                std::string list;
                std::vector<int> seen;
                for (int x : allowed) {
                    bool dup = false;
                    for (int y : seen) {
                        dup = dup || x == y;
                    }
                    if (!dup) {
                        seen.push_back(x);
                        list += std::string(list.empty() ? "" : ", ") + ge::npuemu_dtype_name(x);
                    }
                }
                return fail(PARAM_INVALID,
                            api_ + "GetWorkspaceSize: " + op_ + " does not support " + name + " with data type " +
                                ge::npuemu_dtype_name(d.GetDataType()) + " and format " +
                                ge::npuemu_format_name(d.GetStorageFormat()) + " (with the arguments before it): " +
                                "the OpDef allows data type(s) [" + list + "] there");
            }
            alive = next;
            return 0;
        };
        for (size_t i = 0; i < ins.size(); ++i) {
            int k = call_.in_instance(i);
            if (k >= 0) {
                aclnnStatus rc = check(ins[i], call_.input_descs[k], in_[i].name);
                if (rc != 0) {
                    return rc;
                }
            }
        }
        for (size_t i = 0; i < outs.size(); ++i) {
            int k = call_.out_instance(i);
            if (k >= 0) {
                aclnnStatus rc = check(outs[i], call_.output_descs[k], out_[i].name);
                if (rc != 0) {
                    return rc;
                }
            }
        }
        return 0;
    }

    /* The compile info of the operator, parsed once (TilingParse). */
    const void *compile_info(ops::OpDef *def, npuemu::OpImplFuncs *impl)
    {
        static std::mutex m;
        static std::map<std::string, bool> parsed;
        std::lock_guard<std::mutex> g(m);
        void *ci = def->npuemu_compile_info.get();
        auto parse = def->npuemu_aicore().npuemu_parse();
        if (ci == nullptr && impl != nullptr) {
            ci = impl->compile_info.get();
            if (!parse) {
                parse = impl->parse;
            }
        }
        if (!parsed[op_] && parse) {
            gert::TilingParseContext pc(ci, &call_.platform, op_.c_str());
            (void)parse(&pc);
        }
        parsed[op_] = true;
        return ci;
    }

    std::string op_, api_, kernel_;
    std::string attr_error_;
    std::vector<Arg> in_, out_;
    gert::NpuemuCall call_;
};

inline std::mutex &bin_mutex()
{
    static std::mutex m;
    return m;
}

inline aclnnStatus execute(const char *api, void *workspace, uint64_t workspace_size, aclOpExecutor *executor,
                           aclrtStream stream)
{
    std::string a = api;
    if (executor == nullptr) {
        return fail(PARAM_NULLPTR, a + ": executor is nullptr");
    }
    Exec *ex = reinterpret_cast<Exec *>(executor);
    {
        std::lock_guard<std::mutex> g(exec_mutex());
        if (live_execs().erase(ex) == 0) {
            return fail(PARAM_INVALID, a + ": executor is not one that " + a +
                                           "GetWorkspaceSize made and no call has used yet (an executor runs once)");
        }
    }
    if (ex->magic != EXEC_MAGIC || ex->api != a) {
        return fail(PARAM_INVALID, a + ": executor was made by " + ex->api + "GetWorkspaceSize, not by " + a +
                                       "GetWorkspaceSize");
    }
    struct Free {
        Exec *e;
        ~Free()
        {
            e->magic = 0;
            delete e;
        }
    } free_it{ex};
    if (ex->workspace > 0 && (workspace == nullptr || workspace_size < ex->workspace)) {
        return fail(PARAM_INVALID, a + ": the workspace (" + std::to_string(workspace_size) + " bytes at " +
                                       (workspace ? "a buffer" : "nullptr") + ") is smaller than the " +
                                       std::to_string(ex->workspace) + " bytes GetWorkspaceSize asked for");
    }
    aclrtBinHandle bin = nullptr;
    {
        static std::map<std::string, aclrtBinHandle> bins;
        std::lock_guard<std::mutex> g(bin_mutex());
        auto it = bins.find(ex->bin_path);
        if (it == bins.end()) {
            aclError rc = aclrtBinaryLoadFromFile(ex->bin_path.c_str(), nullptr, &bin);
            if (rc != ACL_SUCCESS) {
                return fail(INNER, a + ": cannot load the kernel " + ex->kernel + " of " + ex->op + " from " +
                                       ex->bin_path + " (error " + std::to_string(rc) + ")");
            }
            bins[ex->bin_path] = bin;
        } else {
            bin = it->second;
        }
    }
    aclrtFuncHandle fn = nullptr;
    aclError rc = aclrtBinaryGetFunctionByEntry(bin, ex->tiling_key, &fn);
    if (rc != ACL_SUCCESS) {
        return fail(INNER, a + ": no kernel function for tiling key " + std::to_string(ex->tiling_key) +
                               " in " + ex->bin_path + " (error " + std::to_string(rc) + ")");
    }
    /* Arguments: the tensors, the workspace, the tiling (a placeholder: its data follow). */
    std::vector<void *> args = ex->ptrs;
    args.push_back(ex->workspace > 0 ? workspace : nullptr);
    args.push_back(nullptr);
    size_t head = args.size() * sizeof(void *);
    std::vector<uint8_t> host(head + ex->tiling.size() + 8, 0);
    std::memcpy(host.data(), args.data(), head);
    if (!ex->tiling.empty()) {
        std::memcpy(host.data() + head, ex->tiling.data(), ex->tiling.size());
    }
    aclrtPlaceHolderInfo ph;
    ph.addrOffset = static_cast<uint32_t>(head - sizeof(void *));
    ph.dataOffset = static_cast<uint32_t>(head);
    rc = aclrtLaunchKernelWithHostArgs(fn, ex->block_dim, stream, nullptr, host.data(), host.size(), &ph, 1);
    if (rc != ACL_SUCCESS) {
        return fail(static_cast<aclnnStatus>(rc), a + ": launching the kernel " + ex->kernel + " failed (error " +
                                                      std::to_string(rc) + ")");
    }
    return 0;
}

} // namespace opapi
} // namespace npuemu

#endif /* NPUEMU_REGISTER_OP_RUNTIME_H */
