/* npu-emu Ascend C CPU headers: TPipe, TQueBind / TQue, TBuf and TBufPool.
 *
 * TPipe hands out the block's Unified Buffer: InitBuffer rounds every buffer up to 32 bytes and
 * faults when the total exceeds the UB (NPUEMU_UB_SIZE, 192 KiB as on Ascend910B). A queue owns
 * `num` buffers and enforces what the hardware only hangs or corrupts on: AllocTensor with no
 * free buffer, EnQue beyond the queue depth, DeQue on an empty queue, FreeTensor of a tensor that
 * is not an allocated buffer of this queue (foreign, already freed, or still enqueued), and
 * first-in first-out order. */
#ifndef NPUEMU_KERNEL_TPIPE_H
#define NPUEMU_KERNEL_TPIPE_H

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "interface/kernel_tensor.h"
#include "npuemu/context.h"

namespace npuemu {

constexpr const char *position_name(AscendC::TPosition p)
{
    using P = AscendC::TPosition;
    return p == P::GM        ? "GM"
           : p == P::A1      ? "A1"
           : p == P::A2      ? "A2"
           : p == P::B1      ? "B1"
           : p == P::B2      ? "B2"
           : p == P::C1      ? "C1"
           : p == P::C2      ? "C2"
           : p == P::CO1     ? "CO1"
           : p == P::CO2     ? "CO2"
           : p == P::VECIN   ? "VECIN"
           : p == P::VECOUT  ? "VECOUT"
           : p == P::VECCALC ? "VECCALC"
           : p == P::SPM     ? "SPM"
           : p == P::TSCM    ? "TSCM"
                             : "?";
}

/* The on-chip buffer of a logical position (npuemu::HwBuf): VECIN / VECOUT / VECCALC / CO2 / SPM
 * the Unified Buffer, A1 / B1 / C1 / TSCM the L1 buffer, A2 L0A, B2 L0B, CO1 L0C, C2 the bias
 * table, C2PIPE2GM the fixpipe buffer. GM has none (HW_COUNT). */
constexpr int hw_of_position(AscendC::TPosition p)
{
    using P = AscendC::TPosition;
    return p == P::VECIN || p == P::VECOUT || p == P::VECCALC || p == P::CO2 || p == P::SPM ? HW_UB
           : p == P::A1 || p == P::B1 || p == P::C1 || p == P::TSCM                        ? HW_L1
           : p == P::A2                                                                    ? HW_L0A
           : p == P::B2                                                                    ? HW_L0B
           : p == P::CO1                                                                   ? HW_L0C
           : p == P::C2                                                                    ? HW_BT
           : p == P::C2PIPE2GM                                                             ? HW_FB
                                                                                           : HW_COUNT;
}
constexpr bool is_ub_position(AscendC::TPosition p) { return hw_of_position(p) == HW_UB; }
constexpr bool is_local_position(AscendC::TPosition p) { return hw_of_position(p) != HW_COUNT; }

enum BufState : uint8_t { BUF_FREE, BUF_ALLOCATED, BUF_QUEUED, BUF_DEQUEUED };

inline const char *buf_state_name(uint8_t s)
{
    return s == BUF_FREE ? "free" : s == BUF_ALLOCATED ? "allocated" : s == BUF_QUEUED ? "enqueued" : "dequeued";
}

struct QueueBuf {
    uint8_t *addr;
    uint32_t len;
    uint8_t state;
    uint32_t gen;
};

/* The state machine of one queue (non-template, shared by every TQue/TQueBind). */
class QueueState {
public:
    std::string name;     /* "TQue<VECIN, 2>" */
    int32_t depth = 1;    /* consecutive EnQue allowed; 0 (in-place queues) = number of buffers */
    std::vector<QueueBuf> bufs;
    std::deque<int32_t> fifo;
    uint32_t next_gen = 1;

    void init(uint8_t num, uint8_t *addr, uint32_t len_aligned, uint32_t len)
    {
        bufs.clear();
        fifo.clear();
        for (uint32_t i = 0; i < num; ++i) {
            bufs.push_back(QueueBuf{addr + i * len_aligned, len, BUF_FREE, 0});
        }
    }
    void require_init(const char *api) const
    {
        if (bufs.empty()) {
            fault("%s::%s before TPipe::InitBuffer gave the queue its buffers", name.c_str(), api);
        }
    }
    int32_t alloc()
    {
        require_init("AllocTensor");
        for (size_t i = 0; i < bufs.size(); ++i) {
            if (bufs[i].state == BUF_FREE) {
                bufs[i].state = BUF_ALLOCATED;
                bufs[i].gen = next_gen++;
                return static_cast<int32_t>(i);
            }
        }
        fault("%s::AllocTensor: all %zu buffers of the queue are in use (%s); FreeTensor one first "
              "(on hardware AllocTensor waits for a free buffer forever)",
              name.c_str(), bufs.size(), describe().c_str());
    }
    /* Which buffer of this queue `t` is, or fault with `api` in the message. */
    int32_t identify(const char *api, const void *owner, const void *self, int32_t slot, uint32_t gen,
                     const void *addr) const
    {
        require_init(api);
        if (addr == nullptr) {
            fault("%s::%s of a tensor that holds no buffer", name.c_str(), api);
        }
        /* a view of the buffer (operator[], ReinterpretCast) stands for the whole buffer, as the
         * buffer handle it carries does on the NPU */
        const uint8_t *a = static_cast<const uint8_t *>(addr);
        if (owner != self || slot < 0 || static_cast<size_t>(slot) >= bufs.size() ||
            a < bufs[static_cast<size_t>(slot)].addr ||
            a >= bufs[static_cast<size_t>(slot)].addr + bufs[static_cast<size_t>(slot)].len) {
            fault("%s::%s of a tensor at UB offset 0x%llx that is not a buffer of this queue (its "
                  "buffers are at %s)",
                  name.c_str(), api, static_cast<unsigned long long>(ub_offset(addr)), addresses().c_str());
        }
        const QueueBuf &b = bufs[static_cast<size_t>(slot)];
        if (b.gen != gen || b.state == BUF_FREE) {
            fault("%s::%s of a tensor whose buffer (UB offset 0x%llx) was already freed with FreeTensor",
                  name.c_str(), api, static_cast<unsigned long long>(ub_offset(addr)));
        }
        return slot;
    }
    void enque(int32_t slot)
    {
        QueueBuf &b = bufs[static_cast<size_t>(slot)];
        if (b.state == BUF_QUEUED) {
            fault("%s::EnQue of a tensor (UB offset 0x%llx) that is already in the queue", name.c_str(),
                  static_cast<unsigned long long>(ub_offset(b.addr)));
        }
        const size_t limit = depth > 0 ? static_cast<size_t>(depth) : bufs.size();
        if (fifo.size() >= limit) {
            fault("%s::EnQue: the queue already holds %zu tensors, its depth is %d (DeQue first, or "
                  "declare the queue with a larger depth); on hardware this corrupts the queue",
                  name.c_str(), fifo.size(), depth);
        }
        b.state = BUF_QUEUED;
        fifo.push_back(slot);
    }
    int32_t deque()
    {
        require_init("DeQue");
        if (fifo.empty()) {
            fault("%s::DeQue on an empty queue (%s); on hardware DeQue waits forever", name.c_str(),
                  describe().c_str());
        }
        int32_t slot = fifo.front();
        fifo.pop_front();
        bufs[static_cast<size_t>(slot)].state = BUF_DEQUEUED;
        return slot;
    }
    void free(int32_t slot)
    {
        QueueBuf &b = bufs[static_cast<size_t>(slot)];
        if (b.state == BUF_QUEUED) {
            fault("%s::FreeTensor of a tensor (UB offset 0x%llx) that is still in the queue (DeQue it first)",
                  name.c_str(), static_cast<unsigned long long>(ub_offset(b.addr)));
        }
        b.state = BUF_FREE;
    }
    std::string describe() const
    {
        size_t n[4] = {0, 0, 0, 0};
        for (const QueueBuf &b : bufs) {
            n[b.state]++;
        }
        char buf[160];
        std::snprintf(buf, sizeof buf, "%zu allocated, %zu enqueued, %zu dequeued and not freed, %zu free",
                      n[BUF_ALLOCATED], n[BUF_QUEUED], n[BUF_DEQUEUED], n[BUF_FREE]);
        return buf;
    }
    std::string addresses() const
    {
        std::string s;
        for (size_t i = 0; i < bufs.size(); ++i) {
            char buf[48];
            std::snprintf(buf, sizeof buf, "%s0x%llx", i ? ", " : "",
                          static_cast<unsigned long long>(ub_offset(bufs[i].addr)));
            s += buf;
        }
        return s.empty() ? "none" : s;
    }
};

} // namespace npuemu

namespace AscendC {

using TEventID = int8_t;

class TPipe;

template <TPosition src, TPosition dst, int32_t depth,
#if __cplusplus >= 201703L
          auto mask = 0
#else
          int mask = 0
#endif
          >
class TQueBind {
    static_assert(npuemu::is_local_position(src == AscendC::TPosition::GM ? dst : src) &&
                      npuemu::is_local_position(dst == AscendC::TPosition::GM ? src : dst),
                  "npu-emu: a queue's positions must name on-chip buffers (VECIN, VECOUT, VECCALC, A1, A2, B1, B2, "
                  "C1, C2, CO1, CO2, TSCM, C2PIPE2GM), not GM");
    static_assert(depth >= 0, "TQue depth must be >= 0");

public:
    __aicore__ inline TQueBind()
    {
        q_.depth = depth;
        if (src == dst) {
            q_.name = std::string("TQue<") + npuemu::position_name(src) + ", " + std::to_string(depth) + ">";
        } else {
            q_.name = std::string("TQueBind<") + npuemu::position_name(src) + ", " +
                      npuemu::position_name(dst) + ", " + std::to_string(depth) + ">";
        }
    }
    TQueBind(const TQueBind &) = delete;
    TQueBind &operator=(const TQueBind &) = delete;

    template <typename T>
    __aicore__ inline LocalTensor<T> AllocTensor()
    {
        return make<T>(q_.alloc());
    }
    template <typename T>
    __aicore__ inline void AllocTensor(LocalTensor<T> &tensor)
    {
        tensor = AllocTensor<T>();
    }
    template <typename T>
    __aicore__ inline bool EnQue(const LocalTensor<T> &tensor)
    {
        q_.enque(q_.identify("EnQue", tensor.owner_, this, tensor.slot_, tensor.gen_, tensor.addr_));
        return true;
    }
    template <typename T>
    __aicore__ inline LocalTensor<T> DeQue()
    {
        return make<T>(q_.deque());
    }
    template <typename T>
    __aicore__ inline void DeQue(LocalTensor<T> &tensor)
    {
        tensor = DeQue<T>();
    }
    template <typename T>
    __aicore__ inline void FreeTensor(LocalTensor<T> &tensor)
    {
        q_.free(q_.identify("FreeTensor", tensor.owner_, this, tensor.slot_, tensor.gen_, tensor.addr_));
    }
    /* True if another EnQue fits within the depth. */
    __aicore__ inline bool VacantInQue() const
    {
        const size_t limit = depth > 0 ? static_cast<size_t>(depth) : q_.bufs.size();
        return q_.fifo.size() < limit;
    }
    __aicore__ inline bool HasTensorInQue() const { return !q_.fifo.empty(); }
    __aicore__ inline int32_t GetTensorCountInQue() const { return static_cast<int32_t>(q_.fifo.size()); }
    __aicore__ inline bool HasIdleBuffer() const
    {
        for (const npuemu::QueueBuf &b : q_.bufs) {
            if (b.state == npuemu::BUF_FREE) {
                return true;
            }
        }
        return false;
    }
    __aicore__ inline void FreeAllEvent() {}

    /* npu-emu internals */
    npuemu::QueueState q_;
    static constexpr int npuemu_hw() { return npuemu::hw_of_position(src == AscendC::TPosition::GM ? dst : src); }

private:
    template <typename T>
    LocalTensor<T> make(int32_t slot) const
    {
        const npuemu::QueueBuf &b = q_.bufs[static_cast<size_t>(slot)];
        LocalTensor<T> t;
        t.addr_ = reinterpret_cast<T *>(b.addr);
        t.size_ = static_cast<uint32_t>(b.len / sizeof(T));
        t.capacity_ = b.len;
        t.pos_ = src == dst ? src : dst;
        t.owner_ = this;
        t.slot_ = slot;
        t.gen_ = b.gen;
        return t;
    }
};

template <TPosition pos, int32_t depth,
#if __cplusplus >= 201703L
          auto mask = 0
#else
          int mask = 0
#endif
          >
class TQue : public TQueBind<pos, pos, depth, mask> {
public:
    __aicore__ inline TQue() {}
};

template <TPosition pos = TPosition::VECCALC>
class TBuf {
    static_assert(npuemu::is_local_position(pos),
                  "npu-emu: a TBuf's position must name an on-chip buffer (VECCALC, VECIN, VECOUT, A1, A2, B1, B2, "
                  "C1, C2, CO1, CO2, TSCM), not GM");

public:
    __aicore__ inline TBuf() {}
    TBuf(const TBuf &) = delete;
    TBuf &operator=(const TBuf &) = delete;

    /* The whole buffer as elements of T. */
    template <typename T>
    __aicore__ inline LocalTensor<T> Get()
    {
        require_init("Get");
        return make<T>(0, static_cast<uint32_t>(len_ / sizeof(T)));
    }
    /* The first `len` elements of the buffer. */
    template <typename T>
    __aicore__ inline LocalTensor<T> Get(uint32_t len)
    {
        require_init("Get");
        if (static_cast<uint64_t>(len) * sizeof(T) > len_) {
            npuemu::fault("TBuf<%s>::Get<%s>(%u): %llu bytes, the buffer has %u", npuemu::position_name(pos),
                          npuemu::type_name<T>::get(), len,
                          static_cast<unsigned long long>(static_cast<uint64_t>(len) * sizeof(T)), len_);
        }
        return make<T>(0, len);
    }
    /* `size` elements starting `bufOffset` bytes into the buffer. */
    template <typename T>
    __aicore__ inline LocalTensor<T> GetWithOffset(uint32_t size, uint32_t bufOffset)
    {
        require_init("GetWithOffset");
        if (static_cast<uint64_t>(bufOffset) + static_cast<uint64_t>(size) * sizeof(T) > len_) {
            npuemu::fault("TBuf<%s>::GetWithOffset<%s>(%u, %u): bytes %u..%llu, the buffer has %u",
                          npuemu::position_name(pos), npuemu::type_name<T>::get(), size, bufOffset, bufOffset,
                          static_cast<unsigned long long>(bufOffset + static_cast<uint64_t>(size) * sizeof(T)),
                          len_);
        }
        return make<T>(bufOffset, size);
    }

    /* npu-emu internals */
    uint8_t *addr_ = nullptr;
    uint32_t len_ = 0;

private:
    void require_init(const char *api) const
    {
        if (addr_ == nullptr) {
            npuemu::fault("TBuf<%s>::%s before TPipe::InitBuffer gave it its buffer", npuemu::position_name(pos),
                          api);
        }
    }
    template <typename T>
    LocalTensor<T> make(uint32_t offset, uint32_t size) const
    {
        LocalTensor<T> t;
        t.addr_ = reinterpret_cast<T *>(addr_ + offset);
        t.size_ = size;
        t.capacity_ = len_ - offset;
        t.pos_ = pos;
        t.owner_ = this;
        return t;
    }
};

/* TBufPool: a piece of one on-chip buffer carved out with TPipe::InitBufPool (or out of another
 * pool with TBufPool::InitBufPool), from which TQue / TBuf buffers and smaller pools are handed
 * out. A pool created with a `shareBuf` starts where that pool starts and may be no longer than
 * it: the two are used one after the other (the reference's memory reuse). Reset ends the pool's
 * current use: the buffers it handed out stay where they are (a queue initialised from it may be
 * used again), and the next InitBuffer / InitBufPool starts again from the pool's start. */
template <TPosition pos, uint32_t bufIDSize = 4>
class TBufPool {
    static_assert(pos == TPosition::VECIN || pos == TPosition::VECOUT || pos == TPosition::VECCALC ||
                      pos == TPosition::A1 || pos == TPosition::B1 || pos == TPosition::C1,
                  "npu-emu: AscendC::TBufPool's position must be VECIN, VECOUT, VECCALC, A1, B1 or C1");
    static_assert(bufIDSize >= 1 && bufIDSize <= 16, "npu-emu: AscendC::TBufPool's bufIDSize must be in [1, 16]");

public:
    __aicore__ inline TBufPool() {}
    TBufPool(const TBufPool &) = delete;
    TBufPool &operator=(const TBufPool &) = delete;

    /* Give a queue `num` buffers of `len` bytes each (each rounded up to 32 bytes) from the pool. */
    template <class T>
    __aicore__ inline bool InitBuffer(T &que, uint8_t num, uint32_t len)
    {
        const std::string n = que.q_.name;
        if (T::npuemu_hw() != npuemu_hw()) {
            npuemu::fault("%s::InitBuffer(%s, num %u, len %u): the queue lies in %s, the pool in %s (they must be "
                          "the same physical buffer)",
                          name().c_str(), n.c_str(), num, len, npuemu::hw_name(T::npuemu_hw()),
                          npuemu::hw_name(npuemu_hw()));
        }
        if (num == 0 || len == 0) {
            npuemu::fault("%s::InitBuffer(%s, num %u, len %u): num and len must be positive", name().c_str(),
                          n.c_str(), num, len);
        }
        const uint32_t aligned = npuemu_align(len);
        uint8_t *addr = npuemu_take("InitBuffer", n.c_str(), num, len, static_cast<uint64_t>(aligned) * num, num);
        que.q_.init(num, addr, aligned, len);
        return true;
    }
    /* Give a TBuf `len` bytes (rounded up to 32 bytes) from the pool. */
    template <TPosition bufPos>
    __aicore__ inline bool InitBuffer(TBuf<bufPos> &buf, uint32_t len)
    {
        const std::string n = std::string("TBuf<") + npuemu::position_name(bufPos) + ">";
        if (npuemu::hw_of_position(bufPos) != npuemu_hw()) {
            npuemu::fault("%s::InitBuffer(%s, len %u): the TBuf lies in %s, the pool in %s (they must be the same "
                          "physical buffer)",
                          name().c_str(), n.c_str(), len, npuemu::hw_name(npuemu::hw_of_position(bufPos)),
                          npuemu::hw_name(npuemu_hw()));
        }
        if (len == 0) {
            npuemu::fault("%s::InitBuffer(%s, len 0): len must be positive", name().c_str(), n.c_str());
        }
        buf.addr_ = npuemu_take("InitBuffer", n.c_str(), 1, len, npuemu_align(len), 1);
        buf.len_ = len;
        return true;
    }
    /* Carve a smaller pool of `len` bytes (rounded up to 32 bytes) out of this one. */
    template <class P>
    __aicore__ inline bool InitBufPool(P &bufPool, uint32_t len)
    {
        check_sub(bufPool, len);
        bufPool.npuemu_attach(npuemu_take("InitBufPool", bufPool.name().c_str(), 1, len, npuemu_align(len), 0),
                              npuemu_align(len));
        return true;
    }
    /* A pool of `len` bytes that reuses the start of `shareBuf` (a pool of this one). */
    template <class P, class U>
    __aicore__ inline bool InitBufPool(P &bufPool, uint32_t len, U &shareBuf)
    {
        check_sub(bufPool, len);
        npuemu_share(bufPool, len, shareBuf, name().c_str());
        return true;
    }
    __aicore__ inline void Reset()
    {
        require_init("Reset");
        used_ = 0;
        ids_ = 0;
    }

    /* npu-emu internals */
    static constexpr int npuemu_hw() { return npuemu::hw_of_position(pos); }
    static constexpr uint32_t npuemu_ids() { return bufIDSize; }
    static uint32_t npuemu_align(uint32_t len)
    {
        return (len + npuemu::UB_ALIGN - 1) / npuemu::UB_ALIGN * npuemu::UB_ALIGN;
    }
    std::string name() const
    {
        return std::string("TBufPool<") + npuemu::position_name(pos) + ", " + std::to_string(bufIDSize) + ">";
    }
    void npuemu_attach(uint8_t *addr, uint32_t len)
    {
        addr_ = addr;
        len_ = len;
        used_ = 0;
        ids_ = 0;
    }
    /* `bufPool` takes the start of `shareBuf` (checked by the caller `who`). */
    template <class P, class U>
    static void npuemu_share(P &bufPool, uint32_t len, U &shareBuf, const char *who)
    {
        if (shareBuf.npuemu_addr() == nullptr) {
            npuemu::fault("%s::InitBufPool(%s, %u, shareBuf %s): shareBuf has not been initialised with InitBufPool",
                          who, bufPool.name().c_str(), len, shareBuf.name().c_str());
        }
        if (U::npuemu_hw() != P::npuemu_hw()) {
            npuemu::fault("%s::InitBufPool(%s, %u, shareBuf %s): the pools lie in different physical buffers (%s, "
                          "%s)",
                          who, bufPool.name().c_str(), len, shareBuf.name().c_str(), npuemu::hw_name(P::npuemu_hw()),
                          npuemu::hw_name(U::npuemu_hw()));
        }
        if (npuemu_align(len) > shareBuf.npuemu_len()) {
            npuemu::fault("%s::InitBufPool(%s, %u, shareBuf %s): the length is larger than the %u bytes of the "
                          "reused pool",
                          who, bufPool.name().c_str(), len, shareBuf.name().c_str(), shareBuf.npuemu_len());
        }
        bufPool.npuemu_attach(shareBuf.npuemu_addr(), npuemu_align(len));
    }
    uint8_t *npuemu_addr() const { return addr_; }
    uint32_t npuemu_len() const { return len_; }

private:
    template <class P>
    void check_sub(P &bufPool, uint32_t len)
    {
        require_init("InitBufPool");
        if (P::npuemu_hw() != npuemu_hw()) {
            npuemu::fault("%s::InitBufPool(%s, %u): the new pool lies in %s, this pool in %s (they must be the same "
                          "physical buffer)",
                          name().c_str(), bufPool.name().c_str(), len, npuemu::hw_name(P::npuemu_hw()),
                          npuemu::hw_name(npuemu_hw()));
        }
        if (len == 0) {
            npuemu::fault("%s::InitBufPool(%s, 0): len must be positive", name().c_str(), bufPool.name().c_str());
        }
    }
    void require_init(const char *api) const
    {
        if (addr_ == nullptr) {
            npuemu::fault("%s::%s before TPipe::InitBufPool (or a parent pool's InitBufPool) gave the pool its memory",
                          name().c_str(), api);
        }
    }
    /* `bytes` from the pool for `what`, using `ids` of its buffer IDs. */
    uint8_t *npuemu_take(const char *api, const char *what, uint32_t num, uint32_t len, uint64_t bytes, uint32_t ids)
    {
        require_init(api);
        if (used_ + bytes > len_) {
            npuemu::fault("%s::%s(%s, num %u, len %u): %llu bytes (rounded up to 32-byte blocks) on top of the %u "
                          "already in use exceed the pool's %u bytes",
                          name().c_str(), api, what, num, len, static_cast<unsigned long long>(bytes), used_, len_);
        }
        if (ids_ + ids > bufIDSize) {
            npuemu::fault("%s::%s(%s, num %u, len %u): %u buffers on top of the %u already handed out exceed the "
                          "pool's bufIDSize %u",
                          name().c_str(), api, what, num, len, ids, ids_, bufIDSize);
        }
        uint8_t *p = addr_ + used_;
        used_ += static_cast<uint32_t>(bytes);
        ids_ += ids;
        return p;
    }
    uint8_t *addr_ = nullptr;
    uint32_t len_ = 0;
    uint32_t used_ = 0;
    uint32_t ids_ = 0;
};

class TPipe {
public:
    __aicore__ inline TPipe() { Init(); }
    __aicore__ inline ~TPipe()
    {
        npuemu::BlockContext &c = npuemu::ctx();
        if (c.pipe == this) {
            c.pipe = nullptr;
        }
    }
    TPipe(const TPipe &) = delete;
    TPipe &operator=(const TPipe &) = delete;

    /* (Re)initialise: this pipe becomes the block's pipe and owns the whole Unified Buffer. */
    __aicore__ inline void Init()
    {
        npuemu::BlockContext &c = npuemu::ctx();
        if (c.pipe != nullptr && c.pipe != this) {
            npuemu::fault("a second TPipe was created while another is alive; both would hand out the "
                          "same Unified Buffer (call Destroy() on the first one)");
        }
        c.pipe = this;
        Reset();
    }

    /* Give a queue `num` buffers of `len` bytes each (each rounded up to 32 bytes). */
    template <class Q>
    __aicore__ inline bool InitBuffer(Q &que, uint8_t num, uint32_t len)
    {
        if (num == 0 || len == 0) {
            npuemu::fault("TPipe::InitBuffer(%s, num %u, len %u): num and len must be positive",
                          que.q_.name.c_str(), num, len);
        }
        const uint32_t aligned = align(len);
        uint8_t *addr = take(que.npuemu_hw(), que.q_.name.c_str(), num, len, static_cast<uint64_t>(aligned) * num);
        que.q_.init(num, addr, aligned, len);
        return true;
    }
    /* Give a TBuf `len` bytes (rounded up to 32 bytes). */
    template <TPosition pos>
    __aicore__ inline bool InitBuffer(TBuf<pos> &buf, uint32_t len)
    {
        if (len == 0) {
            npuemu::fault("TPipe::InitBuffer(TBuf<%s>, len 0): len must be positive", npuemu::position_name(pos));
        }
        std::string name = std::string("TBuf<") + npuemu::position_name(pos) + ">";
        buf.addr_ = take(npuemu::hw_of_position(pos), name.c_str(), 1, len, align(len));
        buf.len_ = len;
        return true;
    }

    /* Carve a pool of `len` bytes (rounded up to 32 bytes) out of its position's buffer. */
    template <class P>
    __aicore__ inline bool InitBufPool(P &bufPool, uint32_t len)
    {
        if (len == 0) {
            npuemu::fault("TPipe::InitBufPool(%s, 0): len must be positive", bufPool.name().c_str());
        }
        const uint32_t aligned = P::npuemu_align(len);
        bufPool.npuemu_attach(take(P::npuemu_hw(), bufPool.name().c_str(), 1, len, aligned, "InitBufPool"), aligned);
        return true;
    }
    /* A pool of `len` bytes that reuses the start of the pool `shareBuf`. */
    template <class P, class U>
    __aicore__ inline bool InitBufPool(P &bufPool, uint32_t len, U &shareBuf)
    {
        if (len == 0) {
            npuemu::fault("TPipe::InitBufPool(%s, 0): len must be positive", bufPool.name().c_str());
        }
        P::npuemu_share(bufPool, len, shareBuf, "TPipe");
        return true;
    }

    /* Release every buffer handed out (queues and TBufs initialised before must not be used again). */
    __aicore__ inline void Reset()
    {
        for (uint32_t &u : used_) {
            u = 0;
        }
    }
    __aicore__ inline void Destroy()
    {
        Reset();
        npuemu::BlockContext &c = npuemu::ctx();
        if (c.pipe == this) {
            c.pipe = nullptr;
        }
    }

    template <HardEvent evt>
    __aicore__ inline TEventID AllocEventID()
    {
        return static_cast<TEventID>(next_event_++ & 7);
    }
    template <HardEvent evt>
    __aicore__ inline void ReleaseEventID(TEventID id)
    {
        (void)id;
    }
    template <HardEvent evt>
    __aicore__ inline TEventID FetchEventID()
    {
        return 0;
    }
    __aicore__ inline TEventID FetchEventID(HardEvent evt)
    {
        (void)evt;
        return 0;
    }

    /* Bytes of UB handed out so far. */
    uint32_t ub_used() const { return used_[npuemu::HW_UB]; }

private:
    static uint32_t align(uint32_t len) { return (len + npuemu::UB_ALIGN - 1) / npuemu::UB_ALIGN * npuemu::UB_ALIGN; }
    uint8_t *take(int hw, const char *what, uint32_t num, uint32_t len, uint64_t bytes, const char *api = "InitBuffer")
    {
        static const char *full[npuemu::HW_COUNT] = {"the Unified Buffer", "the L1 buffer", "the L0A buffer",
                                                     "the L0B buffer", "the L0C buffer", "the bias table",
                                                     "the fixpipe buffer"};
        const uint32_t size = npuemu::hw_size(hw);
        if (used_[hw] + bytes > size) {
            npuemu::fault("TPipe::%s(%s, num %u, len %u): %llu bytes (rounded up to 32-byte blocks) "
                          "on top of the %u already in use exceed %s of %u bytes",
                          api, what, num, len, static_cast<unsigned long long>(bytes), used_[hw], full[hw], size);
        }
        uint8_t *p = npuemu::hw_base(hw) + used_[hw];
        used_[hw] += static_cast<uint32_t>(bytes);
        return p;
    }
    uint32_t used_[npuemu::HW_COUNT] = {};
    uint32_t next_event_ = 0;
};

template <typename T>
__aicore__ inline LocalTensor<T>::LocalTensor(TPosition pos, uint32_t addr, uint32_t tileSize)
{
    const int hw = npuemu::hw_of_position(pos);
    if (hw == npuemu::HW_COUNT) {
        npuemu::fault("LocalTensor(%s, addr %u, tileSize %u): %s is not an on-chip position",
                      npuemu::position_name(pos), addr, tileSize, npuemu::position_name(pos));
    }
    const uint64_t bytes = static_cast<uint64_t>(tileSize) * sizeof(T);
    if (addr % npuemu::UB_ALIGN != 0 || addr + bytes > npuemu::hw_size(hw)) {
        npuemu::fault("LocalTensor(%s, addr %u, tileSize %u): the %llu bytes at %u must be 32-byte aligned and "
                      "lie inside the %u-byte %s buffer",
                      npuemu::position_name(pos), addr, tileSize, static_cast<unsigned long long>(bytes), addr,
                      npuemu::hw_size(hw), npuemu::hw_name(hw));
    }
    addr_ = reinterpret_cast<T *>(npuemu::hw_base(hw) + addr);
    size_ = tileSize;
    capacity_ = npuemu::hw_size(hw) - addr;
    pos_ = pos;
}

/* The physical on-chip buffers (static tensor programming, LocalMemAllocator). */
enum class Hardware : uint8_t { GM, UB, L1, L0A, L0B, L0C, BIAS, FIXBUF, MAX };

/* Static tensor programming: hands out consecutive 32-byte aligned pieces of one on-chip buffer
 * from address 0, without TPipe / TQue (not to be mixed with them on the same buffer). Asking for
 * more than the buffer holds fails the block. */
template <Hardware hard = Hardware::UB>
class LocalMemAllocator {
public:
    static_assert(hard != Hardware::GM && hard != Hardware::MAX,
                  "LocalMemAllocator: the hardware position must be UB, L1, L0A, L0B, L0C, BIAS or FIXBUF");
    __aicore__ inline LocalMemAllocator() {}
    __aicore__ inline uint32_t GetCurAddr() const { return cur_; }

    template <class DataType, uint32_t tileSize>
    __aicore__ inline LocalTensor<DataType> Alloc()
    {
        return Alloc<DataType>(tileSize);
    }
    template <TPosition pos, class DataType, uint32_t tileSize>
    __aicore__ inline LocalTensor<DataType> Alloc()
    {
        return Alloc<pos, DataType>(tileSize);
    }
    template <class DataType>
    __aicore__ inline LocalTensor<DataType> Alloc(uint32_t tileSize)
    {
        return Alloc<default_position(), DataType>(tileSize);
    }
    template <TPosition pos, class DataType>
    __aicore__ inline LocalTensor<DataType> Alloc(uint32_t tileSize)
    {
        static_assert(npuemu::hw_of_position(pos) == hw_index(),
                      "LocalMemAllocator::Alloc: the TPosition must lie in the allocator's Hardware buffer");
        const uint64_t bytes = (static_cast<uint64_t>(tileSize) * sizeof(DataType) + npuemu::UB_ALIGN - 1) /
                               npuemu::UB_ALIGN * npuemu::UB_ALIGN;
        const uint32_t size = npuemu::hw_size(hw_index());
        if (cur_ + bytes > size) {
            npuemu::fault("LocalMemAllocator<%s>::Alloc(%u %s elements): %llu bytes from address %u exceed the "
                          "%u-byte buffer",
                          npuemu::hw_name(hw_index()), tileSize, npuemu::type_name<DataType>::get(),
                          static_cast<unsigned long long>(bytes), cur_, size);
        }
        LocalTensor<DataType> t(pos, cur_, tileSize);
        cur_ += static_cast<uint32_t>(bytes);
        return t;
    }

private:
    static constexpr int hw_index()
    {
        return hard == Hardware::UB    ? npuemu::HW_UB
               : hard == Hardware::L1  ? npuemu::HW_L1
               : hard == Hardware::L0A ? npuemu::HW_L0A
               : hard == Hardware::L0B ? npuemu::HW_L0B
               : hard == Hardware::L0C ? npuemu::HW_L0C
               : hard == Hardware::BIAS ? npuemu::HW_BT
                                        : npuemu::HW_FB;
    }
    static constexpr TPosition default_position()
    {
        return hard == Hardware::UB    ? TPosition::VECCALC
               : hard == Hardware::L1  ? TPosition::A1
               : hard == Hardware::L0A ? TPosition::A2
               : hard == Hardware::L0B ? TPosition::B2
               : hard == Hardware::L0C ? TPosition::CO1
               : hard == Hardware::BIAS ? TPosition::C2
                                        : TPosition::C2PIPE2GM;
    }
    uint32_t cur_ = 0;
};

/* The block's current TPipe (the one most recently constructed and not destroyed). */
__aicore__ inline TPipe *GetTPipePtr()
{
    return static_cast<TPipe *>(npuemu::ctx().pipe);
}

} // namespace AscendC

#endif /* NPUEMU_KERNEL_TPIPE_H */
