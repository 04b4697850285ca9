/* npu-emu Ascend C CPU headers: GlobalTensor<T> (global memory) and LocalTensor<T> (Unified
 * Buffer).
 *
 * A GlobalTensor keeps the canonical device address it was given; every access translates
 * through the block's regions and faults when it is not wholly inside one buffer handed to the
 * kernel. A LocalTensor points into the block's thread-local Unified Buffer; element accesses
 * are checked against the tensor's size. */
#ifndef NPUEMU_KERNEL_TENSOR_H
#define NPUEMU_KERNEL_TENSOR_H

#include <cstdint>
#include <type_traits>

#include "interface/kernel_common.h"
#include "npuemu/context.h"

namespace AscendC {

enum class CacheMode { CACHE_MODE_DISABLE = 0, CACHE_MODE_NORMAL = 1, CACHE_MODE_LAST = 2, CACHE_MODE_PERSISTENT = 4 };
enum class CacheRwMode { READ = 1, WRITE = 2, RW = 3 };

template <typename T> class GlobalTensor;
template <typename T> class LocalTensor;

template <typename T>
class GlobalTensor {
public:
    using PrimType = T;

    __aicore__ inline GlobalTensor() {}

    /* Bind to `bufferSize` elements at `buffer` (a canonical device address). */
    __aicore__ inline void SetGlobalBuffer(__gm__ T *buffer, uint64_t bufferSize)
    {
        addr_ = buffer;
        size_ = bufferSize;
    }
    __aicore__ inline void SetGlobalBuffer(__gm__ T *buffer)
    {
        addr_ = buffer;
        size_ = 0;
    }

    __aicore__ inline const __gm__ T *GetPhyAddr() const { return addr_; }
    __aicore__ inline __gm__ T *GetPhyAddr(const uint64_t offset) const { return addr_ + offset; }
    __aicore__ inline uint64_t GetSize() const { return size_; }

    /* Scalar read of element `offset` (checked against the kernel's buffers). */
    __aicore__ inline T GetValue(const uint64_t offset) const
    {
        T v;
        std::memcpy(&v, npuemu::gm_translate(addr_ + offset, sizeof(T), "GlobalTensor::GetValue reads"),
                    sizeof(T));
        return v;
    }
    /* Scalar write of element `offset` (checked against the kernel's buffers). */
    __aicore__ inline void SetValue(const uint64_t offset, T value)
    {
        std::memcpy(npuemu::gm_translate(addr_ + offset, sizeof(T), "GlobalTensor::SetValue writes"),
                    &value, sizeof(T));
    }
    /* Reference to element `offset` through this process's alias of the buffer. */
    __aicore__ inline T &operator()(const uint64_t offset) const
    {
        return *reinterpret_cast<T *>(
            npuemu::gm_translate(addr_ + offset, sizeof(T), "GlobalTensor::operator() accesses"));
    }

    /* The tensor starting `offset` elements further (size shrinks accordingly). */
    __aicore__ inline GlobalTensor operator[](const uint64_t offset) const
    {
        GlobalTensor t;
        t.addr_ = addr_ + offset;
        t.size_ = size_ > offset ? size_ - offset : 0;
        return t;
    }

    /* L2 cache hints only change performance on hardware. */
    template <CacheRwMode rwMode = CacheRwMode::RW>
    __aicore__ inline void SetL2CacheHint(CacheMode mode)
    {
        (void)mode;
    }

    /* npu-emu internals */
    __gm__ T *addr_ = nullptr;
    uint64_t size_ = 0;
};

template <typename T>
class LocalTensor {
public:
    using PrimType = T;

    __aicore__ inline LocalTensor() {}
    /* Static tensor programming: `tileSize` elements at byte `addr` (32-byte aligned) of the
     * on-chip buffer of position `pos` (defined in kernel_tpipe.h). */
    __aicore__ inline LocalTensor(TPosition pos, uint32_t addr, uint32_t tileSize);

    __aicore__ inline uint32_t GetSize() const { return size_; }
    /* Bytes. */
    __aicore__ inline uint32_t GetLength() const { return static_cast<uint32_t>(size_ * sizeof(T)); }
    __aicore__ inline void SetSize(const uint32_t size)
    {
        if (static_cast<uint64_t>(size) * sizeof(T) > capacity_) {
            npuemu::fault("LocalTensor::SetSize(%u): %u %s elements need %llu bytes, the buffer has %u",
                          size, size, npuemu::type_name<T>::get(),
                          static_cast<unsigned long long>(static_cast<uint64_t>(size) * sizeof(T)),
                          capacity_);
        }
        size_ = size;
    }
    /* Address of the tensor's first element (as the CPU-debug library returns it: a pointer into
     * this block's Unified Buffer, usable as a `__ubuf__ T *`; 32-byte aligned like UB addresses). */
    __aicore__ inline uint64_t GetPhyAddr() const
    {
        check_ub("GetPhyAddr");
        return reinterpret_cast<uint64_t>(addr_);
    }
    __aicore__ inline uint64_t GetPhyAddr(const uint32_t offset) const { return GetPhyAddr() + offset * sizeof(T); }
    __aicore__ inline TPosition GetPosition() const { return pos_; }
    __aicore__ inline int32_t GetUserTag() const { return tag_; }
    __aicore__ inline void SetUserTag(const int32_t tag) { tag_ = tag; }

    __aicore__ inline T GetValue(const uint32_t index) const
    {
        check_index("LocalTensor::GetValue", index);
        return addr_[index];
    }
    __aicore__ inline void SetValue(const uint32_t index, const T value) const
    {
        check_index("LocalTensor::SetValue", index);
        addr_[index] = value;
    }
    __aicore__ inline T &operator()(const uint32_t index) const
    {
        check_index("LocalTensor::operator()", index);
        return addr_[index];
    }

    /* The tensor starting `offset` elements further (size shrinks accordingly). */
    __aicore__ inline LocalTensor operator[](const uint32_t offset) const
    {
        check_ub("operator[]");
        if (offset > size_) {
            npuemu::fault("LocalTensor::operator[](%u) on a tensor of %u %s elements", offset, size_,
                          npuemu::type_name<T>::get());
        }
        LocalTensor t = *this;
        t.addr_ = addr_ + offset;
        t.size_ = size_ - offset;
        t.capacity_ = capacity_ - static_cast<uint32_t>(offset * sizeof(T));
        return t;
    }

    /* The same bytes seen as elements of type U. */
    template <typename U>
    __aicore__ inline LocalTensor<U> ReinterpretCast() const
    {
        LocalTensor<U> t;
        t.addr_ = reinterpret_cast<U *>(addr_);
        t.size_ = static_cast<uint32_t>(static_cast<uint64_t>(size_) * sizeof(T) / sizeof(U));
        t.capacity_ = capacity_;
        t.pos_ = pos_;
        t.owner_ = owner_;
        t.slot_ = slot_;
        t.gen_ = gen_;
        t.tag_ = tag_;
        return t;
    }

    /* `dst = src0 + src1` (also -, *, /, &, |): the operation over dst.GetSize() elements. */
    template <class E>
    __aicore__ inline auto operator=(const E &expr) -> decltype(expr.npuemu_apply(*this), void())
    {
        expr.npuemu_apply(*this);
    }
    LocalTensor(const LocalTensor &) = default;
    LocalTensor &operator=(const LocalTensor &) = default;

    /* npu-emu internals */
    void check_ub(const char *api) const
    {
        if (addr_ == nullptr) {
            npuemu::fault("LocalTensor::%s on a tensor that holds no buffer (not from AllocTensor, "
                          "DeQue or TBuf::Get)",
                          api);
        }
    }
    void check_index(const char *api, uint32_t index) const
    {
        check_ub(api);
        if (index >= size_) {
            npuemu::fault("%s(%u) on a tensor of %u %s elements (UB offset 0x%llx)", api, index, size_,
                          npuemu::type_name<T>::get(),
                          static_cast<unsigned long long>(npuemu::ub_offset(addr_)));
        }
    }
    T *addr_ = nullptr;          /* in this block's UB */
    uint32_t size_ = 0;          /* elements */
    uint32_t capacity_ = 0;      /* bytes from addr_ to the end of the buffer */
    TPosition pos_ = TPosition::VECCALC;
    const void *owner_ = nullptr; /* the queue / TBuf the buffer belongs to */
    int32_t slot_ = -1;           /* buffer index in the owner */
    uint32_t gen_ = 0;            /* allocation generation of that buffer */
    int32_t tag_ = 0;
};

enum class CacheLine { SINGLE_CACHE_LINE = 0, ENTIRE_DATA_CACHE };
enum class DcciDst { CACHELINE_ALL = 0, CACHELINE_UB, CACHELINE_OUT, CACHELINE_ATOMIC };

/* The emulated memory is coherent: scalar GM writes are visible to data copies at once, so
 * cleaning / invalidating the data cache has nothing left to do. */
template <typename T, CacheLine entireType, DcciDst dcciDst>
__aicore__ inline void DataCacheCleanAndInvalid(const GlobalTensor<T> &dst)
{
    (void)dst;
}
template <typename T, CacheLine entireType>
__aicore__ inline void DataCacheCleanAndInvalid(const GlobalTensor<T> &dst)
{
    (void)dst;
}
template <typename T, CacheLine entireType, DcciDst dcciDst>
__aicore__ inline void DataCacheCleanAndInvalid(const LocalTensor<T> &dst)
{
    (void)dst;
}

} // namespace AscendC

#endif /* NPUEMU_KERNEL_TENSOR_H */
