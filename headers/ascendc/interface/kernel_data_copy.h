/* npu-emu Ascend C CPU headers: DataCopy and DataCopyPad.
 *
 * DataCopy moves whole 32-byte data blocks: a length that is not a multiple of 32 bytes is a
 * fault (use DataCopyPad), as are Unified Buffer addresses that are not 32-byte aligned, copies
 * beyond a LocalTensor and global-memory accesses outside the kernel's buffers. DataCopyPad moves
 * byte-exact blocks between GM and UB, each UB block padded to 32 bytes. */
#ifndef NPUEMU_KERNEL_DATA_COPY_H
#define NPUEMU_KERNEL_DATA_COPY_H

#include <cstdint>
#include <cstring>
#include <mutex>
#include <type_traits>

#include "interface/kernel_tensor.h"
#include "npuemu/context.h"

namespace AscendC {

/* DataCopy: blockLen, srcStride and dstStride in 32-byte blocks.
 * DataCopyPad: blockLen in bytes; a stride is in bytes on the GM side and in 32-byte blocks on
 * the UB side. */
struct DataCopyParams {
    __aicore__ DataCopyParams() {}
    __aicore__ DataCopyParams(const uint16_t count, const uint16_t len, const uint16_t srcStrideIn,
                              const uint16_t dstStrideIn)
        : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn)
    {
    }
    uint16_t blockCount = 1;
    uint16_t blockLen = 0;
    uint16_t srcStride = 0;
    uint16_t dstStride = 0;
};

/* DataCopyPad parameters with wider fields: blockLen in bytes, GM strides in bytes, UB strides in
 * 32-byte blocks. */
struct DataCopyExtParams {
    __aicore__ DataCopyExtParams() {}
    __aicore__ DataCopyExtParams(const uint16_t count, const uint32_t len, const uint32_t srcStrideIn,
                                 const uint32_t dstStrideIn, const uint32_t rsvIn)
        : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn), rsv(rsvIn)
    {
    }
    uint16_t blockCount = 1;
    uint32_t blockLen = 0;
    uint32_t srcStride = 0;
    uint32_t dstStride = 0;
    uint32_t rsv = 0;
};

/* Padding of DataCopyPad GM->UB: leftPadding / rightPadding elements around each block, filled
 * with paddingValue when isPad is true (otherwise left as they were). */
template <typename T>
struct DataCopyPadExtParams {
    __aicore__ DataCopyPadExtParams() {}
    __aicore__ DataCopyPadExtParams(const bool isPadValue, const uint8_t leftPadValue, const uint8_t rightPadValue,
                                    T padValue)
        : isPad(isPadValue), leftPadding(leftPadValue), rightPadding(rightPadValue), paddingValue(padValue)
    {
    }
    bool isPad = false;
    uint8_t leftPadding = 0;
    uint8_t rightPadding = 0;
    T paddingValue = T(0);
};

struct DataCopyPadParams {
    __aicore__ DataCopyPadParams() {}
    __aicore__ DataCopyPadParams(const bool isPadValue, const uint8_t leftPadValue, const uint8_t rightPadValue,
                                 const uint64_t padValue)
        : isPad(isPadValue), leftPadding(leftPadValue), rightPadding(rightPadValue), paddingValue(padValue)
    {
    }
    bool isPad = false;
    uint8_t leftPadding = 0;
    uint8_t rightPadding = 0;
    uint64_t paddingValue = 0;
};

enum class PaddingMode : uint8_t { Normal = 0, Compact };

} // namespace AscendC

namespace npuemu {

inline void check_ub_aligned(const char *api, const char *which, const void *p)
{
    if (ub_offset(p) % UB_ALIGN != 0) {
        fault("%s: the %s LocalTensor starts at UB offset 0x%llx, which is not 32-byte aligned", api, which,
              static_cast<unsigned long long>(ub_offset(p)));
    }
}

template <typename T>
inline void check_local_extent(const char *api, const char *which, const AscendC::LocalTensor<T> &t, uint64_t bytes)
{
    t.check_ub(api);
    /* copies move whole 32-byte blocks of the UB: the tensor's last block counts as its own, as
     * long as it lies in the tensor's buffer (InitBuffer rounds buffers up to 32 bytes) */
    const uint64_t size = static_cast<uint64_t>(t.GetSize()) * sizeof(T);
    const uint64_t rounded = (size + UB_ALIGN - 1) / UB_ALIGN * UB_ALIGN;
    const uint64_t buffer = (static_cast<uint64_t>(t.capacity_) + UB_ALIGN - 1) / UB_ALIGN * UB_ALIGN;
    const uint64_t limit = rounded < buffer ? rounded : buffer;
    if (bytes > limit) {
        fault("%s: touches %llu bytes of the %s LocalTensor, which holds %u %s elements (%llu bytes)", api,
              static_cast<unsigned long long>(bytes), which, t.GetSize(), type_name<T>::get(),
              static_cast<unsigned long long>(size));
    }
}

template <typename T>
inline void check_count_aligned(const char *api, uint32_t count)
{
    const uint64_t bytes = static_cast<uint64_t>(count) * sizeof(T);
    if (bytes % UB_ALIGN != 0) {
        fault("%s of %u %s elements (%llu bytes): DataCopy moves whole 32-byte blocks, the length must be a "
              "multiple of 32 bytes (use DataCopyPad for lengths that are not)",
              api, count, type_name<T>::get(), static_cast<unsigned long long>(bytes));
    }
}

/* Strided block copy: `count` blocks of `len` bytes, source blocks `sstep` bytes apart, destination
 * blocks `dstep` bytes apart. */
inline void block_copy(uint8_t *dst, const uint8_t *src, uint32_t count, uint64_t len, uint64_t sstep, uint64_t dstep)
{
    for (uint32_t i = 0; i < count; ++i) {
        std::memmove(dst + i * dstep, src + i * sstep, len);
    }
}

enum AtomicType { ATOMIC_NONE = 0, ATOMIC_F32, ATOMIC_F16, ATOMIC_BF16, ATOMIC_S32, ATOMIC_S16, ATOMIC_S8 };

template <class T> struct atomic_type_of { static constexpr int value = ATOMIC_NONE; };
template <> struct atomic_type_of<float> { static constexpr int value = ATOMIC_F32; };
template <> struct atomic_type_of<half> { static constexpr int value = ATOMIC_F16; };
template <> struct atomic_type_of<bfloat16_t> { static constexpr int value = ATOMIC_BF16; };
template <> struct atomic_type_of<int32_t> { static constexpr int value = ATOMIC_S32; };
template <> struct atomic_type_of<int16_t> { static constexpr int value = ATOMIC_S16; };
template <> struct atomic_type_of<int8_t> { static constexpr int value = ATOMIC_S8; };

/* One lock for every atomic write of this kernel library: blocks run on parallel threads. */
inline std::mutex &atomic_lock()
{
    static std::mutex m;
    return m;
}

template <class T>
inline void atomic_apply(uint8_t *dst, const uint8_t *src, uint64_t len, int op)
{
    using C = typename std::conditional<std::is_floating_point<T>::value || std::is_same<T, half>::value ||
                                            std::is_same<T, bfloat16_t>::value,
                                        float, int64_t>::type;
    for (uint64_t o = 0; o < len; o += sizeof(T)) {
        T a, b;
        std::memcpy(&a, dst + o, sizeof(T));
        std::memcpy(&b, src + o, sizeof(T));
        const C x = static_cast<C>(a), y = static_cast<C>(b);
        const C r = op == 1 ? x + y : op == 2 ? (x > y ? x : y) : (x < y ? x : y);
        T out = static_cast<T>(r);
        if (!std::is_same<C, float>::value) {
            /* integers wrap */
            out = static_cast<T>(static_cast<uint64_t>(static_cast<int64_t>(r)));
        }
        std::memcpy(dst + o, &out, sizeof(T));
    }
}

/* A UB -> GM write of `len` bytes: plain, or (after SetAtomicAdd/Max/Min) combined element by
 * element with what GM holds, in the atomic element type. */
inline void gm_write(const char *api, uint8_t *dst, const uint8_t *src, uint64_t len)
{
    const BlockContext &c = ctx();
    if (c.atomic_op == 0) {
        std::memmove(dst, src, len);
        return;
    }
    static const unsigned sizes[] = {1, 4, 2, 2, 4, 2, 1};
    static const char *names[] = {"", "float", "half", "bfloat16_t", "int32_t", "int16_t", "int8_t"};
    if (len % sizes[c.atomic_type] != 0) {
        fault("%s with atomic %s on %s: %llu bytes are not a whole number of elements", api,
              c.atomic_op == 1 ? "add" : c.atomic_op == 2 ? "max" : "min", names[c.atomic_type],
              static_cast<unsigned long long>(len));
    }
    std::lock_guard<std::mutex> g(atomic_lock());
    switch (c.atomic_type) {
    case ATOMIC_F32: atomic_apply<float>(dst, src, len, c.atomic_op); break;
    case ATOMIC_F16: atomic_apply<half>(dst, src, len, c.atomic_op); break;
    case ATOMIC_BF16: atomic_apply<bfloat16_t>(dst, src, len, c.atomic_op); break;
    case ATOMIC_S32: atomic_apply<int32_t>(dst, src, len, c.atomic_op); break;
    case ATOMIC_S16: atomic_apply<int16_t>(dst, src, len, c.atomic_op); break;
    default: atomic_apply<int8_t>(dst, src, len, c.atomic_op); break;
    }
}

inline void block_write(const char *api, uint8_t *dst, const uint8_t *src, uint32_t count, uint64_t len,
                        uint64_t sstep, uint64_t dstep)
{
    for (uint32_t i = 0; i < count; ++i) {
        gm_write(api, dst + i * dstep, src + i * sstep, len);
    }
}

inline uint64_t extent(uint32_t count, uint64_t len, uint64_t step)
{
    return count == 0 ? 0 : (count - 1) * step + len;
}

} // namespace npuemu

namespace AscendC {

/* GM -> UB, `calCount` elements (calCount * sizeof(T) a multiple of 32 bytes). */
template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T> &dst, const GlobalTensor<T> &src, const uint32_t calCount)
{
    const char *api = "DataCopy GM->UB";
    npuemu::check_count_aligned<T>(api, calCount);
    const uint64_t bytes = static_cast<uint64_t>(calCount) * sizeof(T);
    npuemu::check_local_extent(api, "destination", dst, bytes);
    npuemu::check_ub_aligned(api, "destination", dst.addr_);
    if (bytes == 0) {
        return;
    }
    std::memcpy(dst.addr_, npuemu::gm_translate(src.addr_, bytes, "DataCopy GM->UB reads"), bytes);
}

/* UB -> GM, `calCount` elements (calCount * sizeof(T) a multiple of 32 bytes). */
template <typename T>
__aicore__ inline void DataCopy(const GlobalTensor<T> &dst, const LocalTensor<T> &src, const uint32_t calCount)
{
    const char *api = "DataCopy UB->GM";
    npuemu::check_count_aligned<T>(api, calCount);
    const uint64_t bytes = static_cast<uint64_t>(calCount) * sizeof(T);
    npuemu::check_local_extent(api, "source", src, bytes);
    npuemu::check_ub_aligned(api, "source", src.addr_);
    if (bytes == 0) {
        return;
    }
    npuemu::gm_write(api, npuemu::gm_translate(dst.addr_, bytes, "DataCopy UB->GM writes"),
                     reinterpret_cast<const uint8_t *>(src.addr_), bytes);
}

/* UB -> UB, `calCount` elements (calCount * sizeof(T) a multiple of 32 bytes). */
template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T> &dst, const LocalTensor<T> &src, const uint32_t calCount)
{
    const char *api = "DataCopy UB->UB";
    npuemu::check_count_aligned<T>(api, calCount);
    const uint64_t bytes = static_cast<uint64_t>(calCount) * sizeof(T);
    npuemu::check_local_extent(api, "destination", dst, bytes);
    npuemu::check_local_extent(api, "source", src, bytes);
    npuemu::check_ub_aligned(api, "destination", dst.addr_);
    npuemu::check_ub_aligned(api, "source", src.addr_);
    std::memmove(dst.addr_, src.addr_, bytes);
}

/* GM -> UB with DataCopyParams (all lengths and strides in 32-byte blocks). */
template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T> &dst, const GlobalTensor<T> &src, const DataCopyParams &p)
{
    const char *api = "DataCopy GM->UB";
    const uint64_t len = p.blockLen * 32ull;
    const uint64_t sstep = len + p.srcStride * 32ull, dstep = len + p.dstStride * 32ull;
    npuemu::check_local_extent(api, "destination", dst, npuemu::extent(p.blockCount, len, dstep));
    npuemu::check_ub_aligned(api, "destination", dst.addr_);
    const uint64_t sext = npuemu::extent(p.blockCount, len, sstep);
    if (sext == 0) {
        return;
    }
    const uint8_t *s = npuemu::gm_translate(src.addr_, sext, "DataCopy GM->UB reads");
    npuemu::block_copy(reinterpret_cast<uint8_t *>(dst.addr_), s, p.blockCount, len, sstep, dstep);
}

/* UB -> GM with DataCopyParams (all lengths and strides in 32-byte blocks). */
template <typename T>
__aicore__ inline void DataCopy(const GlobalTensor<T> &dst, const LocalTensor<T> &src, const DataCopyParams &p)
{
    const char *api = "DataCopy UB->GM";
    const uint64_t len = p.blockLen * 32ull;
    const uint64_t sstep = len + p.srcStride * 32ull, dstep = len + p.dstStride * 32ull;
    npuemu::check_local_extent(api, "source", src, npuemu::extent(p.blockCount, len, sstep));
    npuemu::check_ub_aligned(api, "source", src.addr_);
    const uint64_t dext = npuemu::extent(p.blockCount, len, dstep);
    if (dext == 0) {
        return;
    }
    uint8_t *d = npuemu::gm_translate(dst.addr_, dext, "DataCopy UB->GM writes");
    npuemu::block_write(api, d, reinterpret_cast<const uint8_t *>(src.addr_), p.blockCount, len, sstep, dstep);
}

/* UB -> UB with DataCopyParams (all lengths and strides in 32-byte blocks). */
template <typename T>
__aicore__ inline void DataCopy(const LocalTensor<T> &dst, const LocalTensor<T> &src, const DataCopyParams &p)
{
    const char *api = "DataCopy UB->UB";
    const uint64_t len = p.blockLen * 32ull;
    const uint64_t sstep = len + p.srcStride * 32ull, dstep = len + p.dstStride * 32ull;
    npuemu::check_local_extent(api, "destination", dst, npuemu::extent(p.blockCount, len, dstep));
    npuemu::check_local_extent(api, "source", src, npuemu::extent(p.blockCount, len, sstep));
    npuemu::check_ub_aligned(api, "destination", dst.addr_);
    npuemu::check_ub_aligned(api, "source", src.addr_);
    npuemu::block_copy(reinterpret_cast<uint8_t *>(dst.addr_), reinterpret_cast<const uint8_t *>(src.addr_),
                       p.blockCount, len, sstep, dstep);
}

namespace detail_pad {

template <typename T>
inline void gm_to_ub(const LocalTensor<T> &dst, const GlobalTensor<T> &src, uint32_t count, uint64_t len,
                     uint64_t srcGap, uint64_t dstGapBlocks, bool isPad, uint32_t left, uint32_t right, T value)
{
    const char *api = "DataCopyPad GM->UB";
    if (len % sizeof(T) != 0) {
        npuemu::fault("%s: blockLen %llu bytes is not a whole number of %s elements", api,
                      static_cast<unsigned long long>(len), npuemu::type_name<T>::get());
    }
    if (left * sizeof(T) > 32 || right * sizeof(T) > 32) {
        npuemu::fault("%s: leftPadding %u / rightPadding %u elements: each may be at most 32 bytes", api, left,
                      right);
    }
    const uint64_t row = left * sizeof(T) + len + right * sizeof(T);
    const uint64_t row_aligned = (row + 31) / 32 * 32;
    const uint64_t dstep = row_aligned + dstGapBlocks * 32;
    const uint64_t sstep = len + srcGap;
    npuemu::check_local_extent(api, "destination", dst,
                               npuemu::extent(count, isPad ? row : left * sizeof(T) + len, dstep));
    npuemu::check_ub_aligned(api, "destination", dst.addr_);
    const uint64_t sext = npuemu::extent(count, len, sstep);
    const uint8_t *s = sext ? npuemu::gm_translate(src.addr_, sext, "DataCopyPad GM->UB reads") : nullptr;
    uint8_t *d = reinterpret_cast<uint8_t *>(dst.addr_);
    for (uint32_t i = 0; i < count; ++i) {
        uint8_t *r = d + i * dstep;
        std::memcpy(r + left * sizeof(T), s + i * sstep, len);
        if (isPad) {
            T *lp = reinterpret_cast<T *>(r);
            T *rp = reinterpret_cast<T *>(r + left * sizeof(T) + len);
            for (uint32_t k = 0; k < left; ++k) {
                lp[k] = value;
            }
            for (uint32_t k = 0; k < right; ++k) {
                rp[k] = value;
            }
        }
    }
}

template <typename T>
inline void ub_to_gm(const GlobalTensor<T> &dst, const LocalTensor<T> &src, uint32_t count, uint64_t len,
                     uint64_t srcGapBlocks, uint64_t dstGap)
{
    const char *api = "DataCopyPad UB->GM";
    if (len % sizeof(T) != 0) {
        npuemu::fault("%s: blockLen %llu bytes is not a whole number of %s elements", api,
                      static_cast<unsigned long long>(len), npuemu::type_name<T>::get());
    }
    const uint64_t row_aligned = (len + 31) / 32 * 32;
    const uint64_t sstep = row_aligned + srcGapBlocks * 32;
    const uint64_t dstep = len + dstGap;
    npuemu::check_local_extent(api, "source", src, npuemu::extent(count, len, sstep));
    npuemu::check_ub_aligned(api, "source", src.addr_);
    const uint64_t dext = npuemu::extent(count, len, dstep);
    if (dext == 0) {
        return;
    }
    uint8_t *d = npuemu::gm_translate(dst.addr_, dext, "DataCopyPad UB->GM writes");
    npuemu::block_write(api, d, reinterpret_cast<const uint8_t *>(src.addr_), count, len, sstep, dstep);
}

} // namespace detail_pad

/* GM -> UB, byte-exact blocks (blockLen bytes), each UB block padded to 32 bytes. */
template <typename T, PaddingMode mode = PaddingMode::Normal>
__aicore__ inline void DataCopyPad(const LocalTensor<T> &dst, const GlobalTensor<T> &src,
                                   const DataCopyExtParams &dataCopyParams, const DataCopyPadExtParams<T> &padParams)
{
    static_assert(mode == PaddingMode::Normal,
                  "npu-emu: AscendC::DataCopyPad with PaddingMode::Compact is not supported by the CPU kernel "
                  "headers (see README.md)");
    detail_pad::gm_to_ub(dst, src, dataCopyParams.blockCount, dataCopyParams.blockLen, dataCopyParams.srcStride,
                         dataCopyParams.dstStride, padParams.isPad, padParams.leftPadding, padParams.rightPadding,
                         padParams.paddingValue);
}

/* UB -> GM, byte-exact blocks (blockLen bytes); each UB block starts on a 32-byte boundary. */
template <typename T, PaddingMode mode = PaddingMode::Normal>
__aicore__ inline void DataCopyPad(const GlobalTensor<T> &dst, const LocalTensor<T> &src,
                                   const DataCopyExtParams &dataCopyParams)
{
    static_assert(mode == PaddingMode::Normal,
                  "npu-emu: AscendC::DataCopyPad with PaddingMode::Compact is not supported by the CPU kernel "
                  "headers (see README.md)");
    detail_pad::ub_to_gm(dst, src, dataCopyParams.blockCount, dataCopyParams.blockLen, dataCopyParams.srcStride,
                         dataCopyParams.dstStride);
}

/* GM -> UB with the 16-bit DataCopyParams (blockLen in bytes) and DataCopyPadParams. */
template <typename T>
__aicore__ inline void DataCopyPad(const LocalTensor<T> &dst, const GlobalTensor<T> &src,
                                   const DataCopyParams &dataCopyParams, const DataCopyPadParams &padParams)
{
    T value;
    const uint64_t raw = padParams.paddingValue;
    std::memcpy(&value, &raw, sizeof(T) < sizeof raw ? sizeof(T) : sizeof raw);
    detail_pad::gm_to_ub(dst, src, dataCopyParams.blockCount, dataCopyParams.blockLen, dataCopyParams.srcStride,
                         dataCopyParams.dstStride, padParams.isPad, padParams.leftPadding, padParams.rightPadding,
                         value);
}

/* UB -> GM with the 16-bit DataCopyParams (blockLen in bytes). */
template <typename T>
__aicore__ inline void DataCopyPad(const GlobalTensor<T> &dst, const LocalTensor<T> &src,
                                   const DataCopyParams &dataCopyParams)
{
    detail_pad::ub_to_gm(dst, src, dataCopyParams.blockCount, dataCopyParams.blockLen, dataCopyParams.srcStride,
                         dataCopyParams.dstStride);
}

/* Atomic writes to GM: every later UB -> GM DataCopy / DataCopyPad of this block combines its
 * data with what GM holds (sum, max or min, in T), until SetAtomicNone. */
#define NPUEMU_ATOMIC_TYPES_OK(T)                                                                   \
    static_assert(npuemu::atomic_type_of<T>::value != npuemu::ATOMIC_NONE,                         \
                  "npu-emu: atomic operations support float, half, bfloat16_t, int32_t, int16_t and int8_t")
template <typename T>
__aicore__ inline void SetAtomicAdd()
{
    NPUEMU_ATOMIC_TYPES_OK(T);
    npuemu::ctx().atomic_op = 1;
    npuemu::ctx().atomic_type = npuemu::atomic_type_of<T>::value;
}
template <typename T>
__aicore__ inline void SetAtomicMax()
{
    NPUEMU_ATOMIC_TYPES_OK(T);
    npuemu::ctx().atomic_op = 2;
    npuemu::ctx().atomic_type = npuemu::atomic_type_of<T>::value;
}
template <typename T>
__aicore__ inline void SetAtomicMin()
{
    NPUEMU_ATOMIC_TYPES_OK(T);
    npuemu::ctx().atomic_op = 3;
    npuemu::ctx().atomic_type = npuemu::atomic_type_of<T>::value;
}
/* Change the element type of the atomic operation already set. */
template <typename T>
__aicore__ inline void SetAtomicType()
{
    NPUEMU_ATOMIC_TYPES_OK(T);
    npuemu::ctx().atomic_type = npuemu::atomic_type_of<T>::value;
}
__aicore__ inline void SetAtomicNone()
{
    npuemu::ctx().atomic_op = 0;
}
__aicore__ inline void DisableDmaAtomic()
{
    npuemu::ctx().atomic_op = 0;
}
#undef NPUEMU_ATOMIC_TYPES_OK

} // namespace AscendC

#endif /* NPUEMU_KERNEL_DATA_COPY_H */
