/* npu-emu Ascend C CPU headers: op-project tiling in kernel code.
 *
 *   GET_TILING_DATA(tilingData, tiling)                  the registered default TilingData type
 *   GET_TILING_DATA_WITH_STRUCT(Struct, tilingData, tiling)
 *   GET_TILING_DATA_MEMBER(Struct, member, var, tiling)
 *   GET_TILING_DATA_PTR_WITH_STRUCT(Struct, ptr, tiling)
 *   COPY_TILING_WITH_STRUCT(Struct, srcPtr, dstPtr)
 *   TILING_KEY_IS(key)                                   the launch's tiling key == key
 *   REGISTER_TILING_DEFAULT(Struct) / REGISTER_TILING_FOR_TILINGKEY(expr, Struct)
 *
 * `tiling` is the kernel's tiling argument: a GM_ADDR (a pointer into global memory, read with
 * the bounds of a GlobalTensor access) or a pointer to host memory in the CPU-debug path. The
 * default TilingData type is the one registered in the translation unit with
 * REGISTER_TILING_DATA_CLASS(OpType, Struct) (register/tilingdata_base.h, included by an op's
 * tiling header) or REGISTER_TILING_DEFAULT(Struct).
 *
 * The tiling key: ICPU_SET_TILING_KEY(key) (CPU-debug path), the entry a kernel binary was
 * launched through (aclrtBinaryGetFunctionByEntry), or TILING_KEY_VAR when the build defines it;
 * 0 otherwise. */
#ifndef NPUEMU_KERNEL_TILING_MACROS_H
#define NPUEMU_KERNEL_TILING_MACROS_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "npuemu/context.h"

/* The registered default tiling struct: REGISTER_TILING_DATA_CLASS / REGISTER_TILING_DEFAULT
 * declare `Struct npuemu_tiling_default(npuemu_tiling_tag)` in their namespace (global or
 * optiling); this fallback matches when nothing is registered. */
#ifndef NPUEMU_TILING_TAG_DECLARED
#define NPUEMU_TILING_TAG_DECLARED
struct npuemu_tiling_tag {};
#endif
inline void npuemu_tiling_default(...);
namespace optiling {
}

namespace npuemu {

template <class T> struct type_holder {
    using type = T;
};

template <class T>
inline const uint8_t *tiling_bytes(const void *arg, const char *api)
{
    static_assert(!std::is_void<T>::value,
                  "npu-emu: GET_TILING_DATA needs the TilingData struct registered in this translation unit: include "
                  "the op's tiling header (REGISTER_TILING_DATA_CLASS(OpType, TilingData)) or use "
                  "REGISTER_TILING_DEFAULT(TilingData) / GET_TILING_DATA_WITH_STRUCT(TilingData, ...)");
    static_assert(std::is_trivially_copyable<T>::value, "npu-emu: a tiling struct must be trivially copyable");
    if (arg == nullptr) {
        fault("%s: the tiling argument is NULL", api);
    }
    const BlockContext &c = ctx();
    if (!c.active) {
        return static_cast<const uint8_t *>(arg);
    }
    uint64_t off = 0;
    if (const npuemu_gm_region *r = find_region(reinterpret_cast<uint64_t>(arg), sizeof(T), &off)) {
        return static_cast<const uint8_t *>(r->host) + off;
    }
    if (c.ndevmem == 0 && !is_canonical_addr(reinterpret_cast<uint64_t>(arg))) {
        return static_cast<const uint8_t *>(arg); /* CPU-debug path: host memory */
    }
    return gm_translate(arg, sizeof(T), api); /* faults: outside the kernel's buffers */
}

template <class T>
inline T load_tiling(const void *arg, const char *api);

template <class T>
inline T load_tiling_as(type_holder<T>, const void *arg, const char *api)
{
    return load_tiling<T>(arg, api);
}

template <class T>
inline T load_tiling(const void *arg, const char *api)
{
    T v;
    std::memcpy(static_cast<void *>(&v), tiling_bytes<T>(arg, api), sizeof(T));
    return v;
}

/* TILING_KEY_IS: the key of the running launch. */
inline uint64_t tiling_key()
{
#if defined(TILING_KEY_VAR)
    if (!ctx().active || ctx().tiling_key == 0) {
        return static_cast<uint64_t>(TILING_KEY_VAR);
    }
#endif
    return ctx().tiling_key;
}

} // namespace npuemu

#define GET_TILING_DATA(tiling_data, tiling_arg)                                                    \
    auto tiling_data = npuemu::load_tiling_as(                                                      \
        [] {                                                                                        \
            using namespace optiling;                                                               \
            return npuemu::type_holder<decltype(npuemu_tiling_default(npuemu_tiling_tag{}))>{};     \
        }(),                                                                                        \
        (const void *)(tiling_arg), "GET_TILING_DATA")
#define GET_TILING_DATA_WITH_STRUCT(struct_name, tiling_data, tiling_arg)                           \
    struct_name tiling_data = npuemu::load_tiling<struct_name>((const void *)(tiling_arg), "GET_TILING_DATA_WITH_STRUCT")
#define GET_TILING_DATA_MEMBER(struct_name, mem_name, tiling_data, tiling_arg)                      \
    decltype(struct_name::mem_name) tiling_data;                                                    \
    std::memcpy(static_cast<void *>(&tiling_data),                                                  \
                npuemu::tiling_bytes<struct_name>((const void *)(tiling_arg), "GET_TILING_DATA_MEMBER") + \
                    offsetof(struct_name, mem_name),                                                \
                sizeof(tiling_data))
#define GET_TILING_DATA_PTR_WITH_STRUCT(tiling_struct, dst_ptr, tiling_ptr)                         \
    const tiling_struct *dst_ptr = reinterpret_cast<const tiling_struct *>(                         \
        npuemu::tiling_bytes<tiling_struct>((const void *)(tiling_ptr), "GET_TILING_DATA_PTR_WITH_STRUCT"))
#define COPY_TILING_WITH_STRUCT(tiling_struct, src_ptr, dst_ptr)                                    \
    tiling_struct npuemu_copy_of_##dst_ptr = *(src_ptr);                                            \
    const tiling_struct *dst_ptr = &npuemu_copy_of_##dst_ptr
#define TILING_KEY_IS(key) (npuemu::tiling_key() == static_cast<uint64_t>(key))
/* Either of two tiling keys (one branch of an if / else-if chain). */
#define TILING_KEY_LIST(key1, key2) (TILING_KEY_IS(key1) || TILING_KEY_IS(key2))
#define REGISTER_TILING_DEFAULT(tiling_struct) tiling_struct npuemu_tiling_default(npuemu_tiling_tag)
/* The struct of one tiling key: GET_TILING_DATA_WITH_STRUCT reads it; the default stays. */
#define REGISTER_TILING_FOR_TILINGKEY(key_expr, tiling_struct) static_assert(true, "")
#define REGISTER_NONE_TILING static_assert(true, "")

#endif /* NPUEMU_KERNEL_TILING_MACROS_H */
