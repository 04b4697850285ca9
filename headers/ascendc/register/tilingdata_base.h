/* npu-emu: tiling data definitions of Ascend C operators (`#include "register/tilingdata_base.h"`).
 *
 *   namespace optiling {
 *   BEGIN_TILING_DATA_DEF(AddCustomTilingData)
 *       TILING_DATA_FIELD_DEF(uint32_t, totalLength);
 *       TILING_DATA_FIELD_DEF_ARR(uint32_t, 8, lengths);
 *       TILING_DATA_FIELD_DEF_STRUCT(TCubeTiling, cubeTilingData);
 *   END_TILING_DATA_DEF;
 *   REGISTER_TILING_DATA_CLASS(AddCustom, AddCustomTilingData)
 *   }
 *
 * defines a class with a member, set_<field>() and get_<field>() per field (in declaration order,
 * each at its natural alignment), GetDataSize() and SaveToBuffer(buf, capacity): the bytes are
 * the class itself, so kernel code that includes the same header reads the fields directly
 * (GET_TILING_DATA). In kernel translation units REGISTER_TILING_DATA_CLASS also makes the class
 * the default of GET_TILING_DATA. Operator registration (op_def, the tiling function registry)
 * is not emulated. */
#ifndef NPUEMU_REGISTER_TILINGDATA_BASE_H
#define NPUEMU_REGISTER_TILINGDATA_BASE_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#ifndef NPUEMU_TILING_TAG_DECLARED
#define NPUEMU_TILING_TAG_DECLARED
struct npuemu_tiling_tag {};
#endif

namespace npuemu {
/* Copy `n` bytes of a tiling object into a buffer of `capacity` bytes; false if it does not fit. */
inline bool save_tiling(const void *self, size_t n, void *buf, size_t capacity)
{
    if (buf == nullptr || capacity < n) {
        return false;
    }
    std::memcpy(buf, self, n);
    return true;
}
} // namespace npuemu

#define BEGIN_TILING_DATA_DEF(class_name)                                                           \
    class class_name {                                                                              \
    public:                                                                                         \
        using npuemu_self = class_name;

#define TILING_DATA_FIELD_DEF(data_type, field_name)                                                \
    data_type field_name = data_type();                                                             \
    void set_##field_name(data_type v) { field_name = v; }                                          \
    data_type get_##field_name() const { return field_name; }

#define TILING_DATA_FIELD_DEF_ARR(arr_type, arr_size, field_name)                                   \
    arr_type field_name[arr_size] = {};                                                             \
    void set_##field_name(const arr_type *v) { std::memcpy(field_name, v, sizeof(field_name)); }    \
    const arr_type *get_##field_name() const { return field_name; }

#define TILING_DATA_FIELD_DEF_STRUCT(struct_type, field_name) struct_type field_name;

#define END_TILING_DATA_DEF                                                                         \
    size_t GetDataSize() const { return sizeof(npuemu_self); }                                      \
    void SaveToBuffer(void *buf, size_t capacity) const                                             \
    {                                                                                               \
        (void)npuemu::save_tiling(this, sizeof(npuemu_self), buf, capacity);                        \
    }                                                                                               \
    uint8_t *GetDataPtr() { return reinterpret_cast<uint8_t *>(this); }                             \
    void SetDataPtr(void *) {}                                                                      \
    }

#if defined(__CCE_AICORE__) || defined(__NPUEMU_KERNEL__)
/* Kernel code: the class is the default of GET_TILING_DATA. */
#define REGISTER_TILING_DATA_CLASS(op_type, class_name) class_name npuemu_tiling_default(npuemu_tiling_tag);
#else
#define REGISTER_TILING_DATA_CLASS(op_type, class_name)
#endif

#endif /* NPUEMU_REGISTER_TILINGDATA_BASE_H */
