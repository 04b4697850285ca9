/* npu-emu Ascend C CPU headers: AscendC::DumpTensor.
 *
 * Prints a tensor's first dumpSize elements in the documented form
 *     DumpTensor: desc=5, addr=0, data_type=float16, position=UB, dump_size=32
 *     [19.000000, 4.000000, ...]
 * (addr: the byte offset in the block's Unified Buffer for a LocalTensor, the device address
 * for a GlobalTensor). Every element is read through GetValue, so dumping past a tensor or
 * outside the kernel's buffers is a kernel fault. -DASCENDC_DUMP=0 turns it off. One call is
 * written to stdout at once. */
#ifndef NPUEMU_KERNEL_DUMP_H
#define NPUEMU_KERNEL_DUMP_H

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <type_traits>

#include "interface/kernel_macros.h"
#include "interface/kernel_tensor.h"
#include "npuemu/context.h"
#include "npuemu/half.h"

namespace npuemu {

template <class T> inline const char *dump_type_name() { return "unknown"; }
template <> inline const char *dump_type_name<half>() { return "float16"; }
template <> inline const char *dump_type_name<bfloat16_t>() { return "bfloat16"; }
template <> inline const char *dump_type_name<float>() { return "float32"; }
template <> inline const char *dump_type_name<int8_t>() { return "int8"; }
template <> inline const char *dump_type_name<uint8_t>() { return "uint8"; }
template <> inline const char *dump_type_name<int16_t>() { return "int16"; }
template <> inline const char *dump_type_name<uint16_t>() { return "uint16"; }
template <> inline const char *dump_type_name<int32_t>() { return "int32"; }
template <> inline const char *dump_type_name<uint32_t>() { return "uint32"; }
template <> inline const char *dump_type_name<int64_t>() { return "int64"; }
template <> inline const char *dump_type_name<uint64_t>() { return "uint64"; }
template <> inline const char *dump_type_name<bool>() { return "bool"; }

template <class T> inline void dump_value(std::string &out, T v)
{
    char buf[64];
    if (std::is_same<T, half>::value || std::is_same<T, bfloat16_t>::value ||
        std::is_floating_point<T>::value) {
        std::snprintf(buf, sizeof buf, "%f", static_cast<double>(static_cast<float>(v)));
    } else if (std::is_signed<T>::value) {
        std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
    } else {
        std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(v));
    }
    out += buf;
}

/* `get(i)` reads element i (through the tensor's checked GetValue). */
template <class T, class Get>
inline void dump(uint32_t desc, unsigned long long addr, const char *position, uint32_t dumpSize, Get get)
{
    char head[192];
    std::snprintf(head, sizeof head, "DumpTensor: desc=%u, addr=%llu, data_type=%s, position=%s, dump_size=%u\n",
                  desc, addr, dump_type_name<T>(), position, dumpSize);
    std::string out = head;
    out += "[";
    for (uint32_t i = 0; i < dumpSize; ++i) {
        if (i) {
            out += ", ";
        }
        dump_value<T>(out, get(i));
    }
    out += "]\n";
    static std::mutex m;
    std::lock_guard<std::mutex> g(m);
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
}

} // namespace npuemu

namespace AscendC {

template <typename T>
__aicore__ inline void DumpTensor(const LocalTensor<T> &tensor, uint32_t desc, uint32_t dumpSize)
{
#if defined(ASCENDC_DUMP) && (ASCENDC_DUMP == 0)
    (void)tensor;
    (void)desc;
    (void)dumpSize;
#else
    npuemu::dump<T>(desc, npuemu::ub_offset(reinterpret_cast<const void *>(static_cast<uintptr_t>(tensor.GetPhyAddr()))), "UB", dumpSize,
                    [&](uint32_t i) { return tensor.GetValue(i); });
#endif
}

template <typename T>
__aicore__ inline void DumpTensor(const GlobalTensor<T> &tensor, uint32_t desc, uint32_t dumpSize)
{
#if defined(ASCENDC_DUMP) && (ASCENDC_DUMP == 0)
    (void)tensor;
    (void)desc;
    (void)dumpSize;
#else
    npuemu::dump<T>(desc, static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(tensor.GetPhyAddr())), "GM",
                    dumpSize, [&](uint32_t i) { return tensor.GetValue(i); });
#endif
}

} // namespace AscendC

#endif /* NPUEMU_KERNEL_DUMP_H */
