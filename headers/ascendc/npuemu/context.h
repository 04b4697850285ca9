/* npu-emu Ascend C CPU headers: the emulated AI core a kernel block runs on.
 *
 * Each block runs on its own thread. This file holds that thread's block context (kernel name,
 * block index and count, the global-memory regions handed to the kernel), its Unified Buffer
 * (thread-local, NPUEMU_UB_SIZE bytes), the translation of global-memory addresses through the
 * regions, and the kernel fault: every check in these headers that finds something the hardware
 * would hang on, corrupt or trap on throws npuemu::KernelFault with a message naming the kernel,
 * the block, the API and the values; run_block (npuemu/launch.h) turns it into the launch's error. */
#ifndef NPUEMU_CONTEXT_H
#define NPUEMU_CONTEXT_H

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <stdlib.h>
#include <string>
#include <time.h>

#include "npuemu/half.h"
#include "npuemu/regions.h"

/* Unified Buffer bytes per AI core. 192 KiB is the vector core's UB on Ascend910B (Atlas A2),
 * the SoC npu-emu emulates by default; a kernel may define NPUEMU_UB_SIZE before including
 * kernel_operator.h to model another SoC (e.g. 256 KiB for Ascend910 / Ascend310P). */
#ifndef NPUEMU_UB_SIZE
#define NPUEMU_UB_SIZE (192u * 1024u)
#endif

/* Constants that template arguments refer to need external linkage (C++17 inline variables). */
#if __cplusplus >= 201703L
#define NPUEMU_INLINE_VAR inline
#else
#define NPUEMU_INLINE_VAR
#endif

/* Header code that only touches the Unified Buffer, the cube buffers or memory already checked
 * (element loops of the vector and cube instructions, the access checks themselves) is not
 * instrumented (see raw_access.h). */
#if defined(__SANITIZE_ADDRESS__)
#define NPUEMU_NOSAN __attribute__((no_sanitize_address))
#else
#define NPUEMU_NOSAN
#endif

namespace npuemu {

constexpr uint32_t UB_SIZE = NPUEMU_UB_SIZE;
constexpr uint32_t UB_ALIGN = 32; /* one data block */

/* The exception behind every kernel fault. what() is the complete message. */
class __attribute__((visibility("default"))) KernelFault : public std::exception {
public:
    explicit KernelFault(std::string m) : msg_(std::move(m)) {}
    const char *what() const noexcept override { return msg_.c_str(); }

private:
    std::string msg_;
};

struct BlockContext {
    const char *kernel = nullptr;
    const npuemu_gm_region *regions = nullptr;
    size_t nregions = 0;
    const npuemu_mem_range *devmem = nullptr; /* every device's HBM (alias ranges) */
    size_t ndevmem = 0;
    uint32_t block_idx = 0;
    uint32_t block_num = 0;
    uint32_t cores = 0;
    bool active = false;
    uint64_t tiling_key = 0;
    void *launch = nullptr;
    int (*sync_all)(void *, uint32_t, char *, size_t) = nullptr;
    void *pipe = nullptr; /* the current AscendC::TPipe of this block */
    uint32_t ub_used = 0; /* bytes of UB handed out by the current TPipe */
    int atomic_op = 0;    /* SetAtomicAdd/Max/Min: 0 none, 1 add, 2 max, 3 min */
    int atomic_type = 0;  /* AtomicType of the element type set with it */
    int core_type = 2;    /* AscendC::AIV (2) or AIC (1): which branch ASCEND_IS_AIV / _AIC takes */
    /* the vector mask register (SetVectorMask / SetMaskCount / SetMaskNorm / ResetMask) */
    bool mask_counter = false;
    uint64_t mask_hi = ~0ull;
    uint64_t mask_lo = ~0ull;
    void *sys_workspace = nullptr; /* GetSysWorkSpacePtr */
};

/* Default visibility even under -fvisibility=hidden: a kernel library and the code that runs its
 * blocks (ICPU_RUN_KF in the executable) must share one context per thread. */
__attribute__((visibility("default"))) inline BlockContext &ctx()
{
    static thread_local BlockContext c;
    return c;
}

} // namespace npuemu

/* The built-in variables of kernel code (Ascend C "内置变量"): the index of the block and the
 * number of blocks of the launch, as GetBlockIdx() / GetBlockNum() return them. Each block runs
 * on its own thread, so they are thread-local; one instance is shared by every library of the
 * process (a kernel library and the executable that runs its blocks). */
#if __cplusplus >= 201703L
__attribute__((visibility("default"))) inline thread_local int64_t block_idx = 0;
__attribute__((visibility("default"))) inline thread_local int64_t block_num = 0;
#else
__attribute__((weak, visibility("default"))) thread_local int64_t block_idx = 0;
__attribute__((weak, visibility("default"))) thread_local int64_t block_num = 0;
#endif

namespace npuemu {

inline uint64_t monotonic_ns()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

inline void set_builtins(int64_t idx, int64_t num)
{
    ::block_idx = idx;
    ::block_num = num;
}

/* The on-chip buffers of the AI core a block emulates, with their sizes on Ascend910B (the SoC
 * npu-emu emulates by default; the platform file's L1_SIZE, L0A_SIZE, ... of Ascend910B1). Each
 * block (thread) has its own, allocated on first use, zero at start. */
enum HwBuf { HW_UB = 0, HW_L1, HW_L0A, HW_L0B, HW_L0C, HW_BT, HW_FB, HW_COUNT };
#ifndef NPUEMU_L1_SIZE
#define NPUEMU_L1_SIZE (512u * 1024u)
#endif
constexpr uint32_t L1_SIZE = NPUEMU_L1_SIZE;
constexpr uint32_t L0A_SIZE = 64u * 1024u;
constexpr uint32_t L0B_SIZE = 64u * 1024u;
constexpr uint32_t L0C_SIZE = 128u * 1024u;
constexpr uint32_t BT_SIZE = 1024u;
constexpr uint32_t FB_SIZE = 2048u;

inline uint32_t hw_size(int b)
{
    static const uint32_t sizes[HW_COUNT] = {UB_SIZE, L1_SIZE, L0A_SIZE, L0B_SIZE, L0C_SIZE, BT_SIZE, FB_SIZE};
    return sizes[b];
}
inline const char *hw_name(int b)
{
    static const char *names[HW_COUNT] = {"UB", "L1", "L0A", "L0B", "L0C", "BT", "FB"};
    return names[b];
}

struct HwBuffers {
    uint8_t *p[HW_COUNT] = {};
    ~HwBuffers()
    {
        for (uint8_t *q : p) {
            std::free(q);
        }
    }
};
NPUEMU_NOSAN inline HwBuffers &hw_buffers()
{
    static thread_local HwBuffers h;
    return h;
}

/* This thread's buffer `b`, allocated on first use (64-byte aligned). */
NPUEMU_NOSAN inline uint8_t *hw_base(int b)
{
    HwBuffers &h = hw_buffers();
    if (h.p[b] == nullptr) {
        void *p = nullptr;
        if (posix_memalign(&p, 64, hw_size(b)) != 0) {
            p = nullptr;
        }
        h.p[b] = static_cast<uint8_t *>(p);
        if (h.p[b] == nullptr) {
            std::fprintf(stderr, "npu-emu: cannot allocate the %u-byte %s buffer\n", hw_size(b), hw_name(b));
            std::abort();
        }
        std::memset(h.p[b], 0, hw_size(b));
    }
    return h.p[b];
}

/* This thread's Unified Buffer. */
inline uint8_t *ub_base() { return hw_base(HW_UB); }

/* The buffer holding `p` (HW_COUNT if none of this block's). */
NPUEMU_NOSAN inline int hw_of(const void *p)
{
    const uint8_t *q = static_cast<const uint8_t *>(p);
    const HwBuffers &h = hw_buffers();
    for (int b = 0; b < HW_COUNT; ++b) {
        const uint8_t *base = h.p[b];
        if (base != nullptr && q >= base && q < base + hw_size(b)) {
            return b;
        }
    }
    return HW_COUNT;
}

inline std::string vformat(const char *fmt, va_list ap)
{
    char buf[512];
    va_list ap2;
    va_copy(ap2, ap);
    int n = std::vsnprintf(buf, sizeof buf, fmt, ap);
    std::string s;
    if (n < 0) {
        s = fmt;
    } else if (static_cast<size_t>(n) < sizeof buf) {
        s.assign(buf, static_cast<size_t>(n));
    } else {
        s.resize(static_cast<size_t>(n) + 1);
        std::vsnprintf(&s[0], s.size(), fmt, ap2);
        s.resize(static_cast<size_t>(n));
    }
    va_end(ap2);
    return s;
}

/* "kernel add_custom block 3/8: " (or a note that no kernel is running). */
inline std::string fault_prefix()
{
    const BlockContext &c = ctx();
    if (!c.active) {
        return "npu-emu: outside a kernel launch: ";
    }
    char buf[256];
    std::snprintf(buf, sizeof buf, "kernel %s block %u/%u: ", c.kernel ? c.kernel : "?", c.block_idx,
                  c.block_num);
    return buf;
}

/* Throw the kernel fault: the prefix naming kernel and block, then the formatted message. */
[[noreturn]] inline void fault(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
[[noreturn]] inline void fault(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    std::string m = fault_prefix() + vformat(fmt, ap);
    va_end(ap);
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
    throw KernelFault(m);
#else
    /* built with -fno-exceptions: the block cannot be unwound, so the process stops here */
    std::fprintf(stderr, "%s\n", m.c_str());
    std::abort();
#endif
}

/* The regions as "x: 0x7f..+4096, y: ...", for messages. */
inline std::string describe_regions()
{
    const BlockContext &c = ctx();
    if (c.nregions == 0) {
        return "no buffers were passed to the kernel";
    }
    std::string s;
    for (size_t i = 0; i < c.nregions; ++i) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "%s%s: 0x%llx+%llu", i ? ", " : "",
                      c.regions[i].name ? c.regions[i].name : "?",
                      static_cast<unsigned long long>(c.regions[i].dev_addr),
                      static_cast<unsigned long long>(c.regions[i].size));
        s += buf;
        if (s.size() > 1500) {
            s += ", ...";
            break;
        }
    }
    return s;
}

/* The canonical device address behind `a`, an address kernel code holds: kernel pointer
 * arguments are aliases of device memory in this process (see regions.h); a canonical address
 * (read from memory, or from the CPU-debug path) is returned as it is. For messages. */
inline uint64_t canonical_of(uint64_t a)
{
    const BlockContext &c = ctx();
    for (size_t i = 0; i < c.nregions; ++i) {
        const npuemu_gm_region &r = c.regions[i];
        const uint64_t h = reinterpret_cast<uint64_t>(r.host);
        if (a >= h && a - h <= r.size) {
            return r.dev_addr + (a - h);
        }
    }
    for (size_t i = 0; i < c.ndevmem; ++i) {
        const npuemu_mem_range &d = c.devmem[i];
        const uint64_t h = reinterpret_cast<uint64_t>(d.host);
        if (a >= h && a - h < d.size) {
            return d.dev_addr + (a - h);
        }
    }
    return a;
}
inline uint64_t canonical_of(const void *p) { return canonical_of(reinterpret_cast<uint64_t>(p)); }

/* The region holding [a, a+bytes), as a canonical (dev_addr) or alias (host) address, or null.
 * *off receives the offset into the region. */
inline const npuemu_gm_region *find_region(uint64_t a, uint64_t bytes, uint64_t *off)
{
    const BlockContext &c = ctx();
    for (size_t i = 0; i < c.nregions; ++i) {
        const npuemu_gm_region &r = c.regions[i];
        const uint64_t h = reinterpret_cast<uint64_t>(r.host);
        if (a >= h && a - h <= r.size && bytes <= r.size - (a - h)) {
            *off = a - h;
            return &r;
        }
        if (a >= r.dev_addr && a - r.dev_addr <= r.size && bytes <= r.size - (a - r.dev_addr)) {
            *off = a - r.dev_addr;
            return &r;
        }
    }
    return nullptr;
}

/* "; it starts 32640 bytes into x and runs 128 bytes past its end", or "". */
inline std::string describe_overrun(uint64_t ca, uint64_t bytes)
{
    const BlockContext &c = ctx();
    for (size_t i = 0; i < c.nregions; ++i) {
        const npuemu_gm_region &r = c.regions[i];
        if (ca >= r.dev_addr && ca - r.dev_addr < r.size) {
            char buf[224];
            std::snprintf(buf, sizeof buf, "; it starts %llu bytes into %s and runs %llu bytes past its end",
                          static_cast<unsigned long long>(ca - r.dev_addr), r.name ? r.name : "?",
                          static_cast<unsigned long long>(bytes - (r.size - (ca - r.dev_addr))));
            return buf;
        }
    }
    /* CPU-debug path (ICPU_RUN_KF): the buffers are the live GmAlloc ones. */
    if (c.nregions > 0 && c.regions[0].name != nullptr && std::strncmp(c.regions[0].name, "GmAlloc#", 8) == 0) {
        return "; under ICPU_RUN_KF every buffer a kernel reads or writes must come from AscendC::GmAlloc";
    }
    return "";
}

/* Translate [addr, addr+bytes) of global memory to this process's alias, or fault. `addr` is a
 * canonical device address or an alias (kernel pointer arguments are aliases).
 * `what` reads like "DataCopy GM->UB reads". */
inline uint8_t *gm_translate(const void *addr, uint64_t bytes, const char *what)
{
    const BlockContext &c = ctx();
    const uint64_t a = reinterpret_cast<uint64_t>(addr);
    if (!c.active) {
        fault("%s %llu bytes at 0x%llx", what, static_cast<unsigned long long>(bytes),
              static_cast<unsigned long long>(a));
    }
    uint64_t off = 0;
    if (const npuemu_gm_region *r = find_region(a, bytes, &off)) {
        return static_cast<uint8_t *>(r->host) + off;
    }
    const uint64_t ca = canonical_of(a);
    std::string regions = describe_regions();
    /* The common mistake, a tail that overruns: say which buffer and by how much. */
    std::string overrun = describe_overrun(ca, bytes);
    fault("%s %llu bytes at 0x%llx, outside every buffer passed to the kernel (%s)%s", what,
          static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(ca), regions.c_str(),
          overrun.c_str());
}

/* ---- scalar accesses through __gm__ pointers in kernel code ------------------------------
 *
 * Kernel translation units are compiled with -fsanitize=kernel-address and every memory access
 * made through a pointer goes through the __asan_{load,store}N_noabort functions below (defined
 * in raw_access.h). An access outside the device-memory alias ranges (stack, Unified Buffer,
 * host memory) passes at once; one inside must lie wholly in a buffer passed to the kernel,
 * like a GlobalTensor access. The envelope of the alias ranges is kept outside thread-local
 * storage, so the common case costs two comparisons. */
struct DevmemEnvelope {
    uint64_t lo = 0, hi = 0; /* [lo, hi): every device's alias range lies inside */
};
__attribute__((visibility("default"))) NPUEMU_NOSAN inline DevmemEnvelope &devmem_envelope()
{
    static DevmemEnvelope e;
    return e;
}

inline void set_devmem_envelope(const npuemu_mem_range *d, size_t n)
{
    uint64_t lo = ~0ull, hi = 0;
    for (size_t i = 0; i < n; ++i) {
        const uint64_t h = reinterpret_cast<uint64_t>(d[i].host);
        lo = h < lo ? h : lo;
        hi = h + d[i].size > hi ? h + d[i].size : hi;
    }
    if (n == 0) {
        return;
    }
    DevmemEnvelope &e = devmem_envelope();
    /* the ranges of a process do not change once its node is mapped: every launch stores the
     * same values */
    __atomic_store_n(&e.lo, lo, __ATOMIC_RELAXED);
    __atomic_store_n(&e.hi, hi, __ATOMIC_RELAXED);
}

/* Whether `a` is a canonical device address (npu-emu's layout: device HBM ranges, the VMM range). */
NPUEMU_NOSAN inline bool is_canonical_addr(uint64_t a)
{
    return (a >= 0x110000000000ull && a < 0x510000000000ull) || (a >= 0x680000000000ull && a < 0x780000000000ull);
}

[[noreturn]] inline void raw_fault(uint64_t a, uint64_t bytes, bool write)
{
    const uint64_t ca = canonical_of(a);
    const char *verb = write ? "writes" : "reads";
    if (is_canonical_addr(a)) {
        fault("a __gm__ pointer %s %llu bytes at the device address 0x%llx directly: kernel code holds its pointer "
              "arguments as npu-emu's view of device memory, not a canonical address read from memory or made "
              "from an integer (pass the buffer as a kernel argument, or use GlobalTensor)",
              verb, static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(a));
    }
    std::string regions = describe_regions();
    std::string overrun = describe_overrun(ca, bytes);
    fault("a __gm__ pointer %s %llu bytes at 0x%llx, outside every buffer passed to the kernel (%s)%s", verb,
          static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(ca), regions.c_str(),
          overrun.c_str());
}

/* The slow path of a checked access: `a` lies in the alias envelope (or is canonical). */
__attribute__((noinline)) NPUEMU_NOSAN inline void raw_check_slow(uint64_t a, uint64_t bytes, bool write)
{
    const BlockContext &c = ctx();
    if (!c.active) {
        return; /* host code: canonical addresses trap as they should (SIGSEGV handler) */
    }
    if (is_canonical_addr(a)) {
        raw_fault(a, bytes, write);
    }
    bool device = false;
    for (size_t i = 0; i < c.ndevmem; ++i) {
        const uint64_t h = reinterpret_cast<uint64_t>(c.devmem[i].host);
        if (a >= h && a - h < c.devmem[i].size) {
            device = true;
            break;
        }
    }
    if (!device) {
        return; /* between two alias ranges: host memory */
    }
    for (size_t i = 0; i < c.nregions; ++i) {
        const npuemu_gm_region &r = c.regions[i];
        const uint64_t h = reinterpret_cast<uint64_t>(r.host);
        if (a >= h && a - h <= r.size && bytes <= r.size - (a - h)) {
            return;
        }
    }
    raw_fault(a, bytes, write);
}

NPUEMU_NOSAN inline void raw_check(const void *p, uint64_t bytes, bool write)
{
    const uint64_t a = reinterpret_cast<uint64_t>(p);
    const DevmemEnvelope &e = devmem_envelope();
    const uint64_t lo = __atomic_load_n(&e.lo, __ATOMIC_RELAXED);
    const uint64_t hi = __atomic_load_n(&e.hi, __ATOMIC_RELAXED);
    if ((a >= lo && a < hi) || (a >= 0x110000000000ull && a < 0x780000000000ull && is_canonical_addr(a))) {
        raw_check_slow(a, bytes, write);
    }
}

/* Offset of a pointer from the start of the on-chip buffer holding it (UB, L1, L0A, ...), for
 * messages, alignment checks and GetPhyAddr. */
inline uint64_t ub_offset(const void *p)
{
    const int b = hw_of(p);
    return static_cast<uint64_t>(static_cast<const uint8_t *>(p) - hw_base(b == HW_COUNT ? HW_UB : b));
}

/* Type names for messages. */
template <class T> struct type_name { static const char *get() { return "T"; } };
#define NPUEMU_TYPE_NAME(T, S)                                                                      \
    template <> struct type_name<T> { static const char *get() { return S; } };
NPUEMU_TYPE_NAME(int8_t, "int8_t")
NPUEMU_TYPE_NAME(uint8_t, "uint8_t")
NPUEMU_TYPE_NAME(int16_t, "int16_t")
NPUEMU_TYPE_NAME(uint16_t, "uint16_t")
NPUEMU_TYPE_NAME(int32_t, "int32_t")
NPUEMU_TYPE_NAME(uint32_t, "uint32_t")
NPUEMU_TYPE_NAME(int64_t, "int64_t")
NPUEMU_TYPE_NAME(uint64_t, "uint64_t")
NPUEMU_TYPE_NAME(float, "float")
NPUEMU_TYPE_NAME(double, "double")
NPUEMU_TYPE_NAME(bool, "bool")
NPUEMU_TYPE_NAME(half, "half")
NPUEMU_TYPE_NAME(bfloat16_t, "bfloat16_t")
#undef NPUEMU_TYPE_NAME

/* false, but only once a template is instantiated: for static_asserts naming unsupported APIs. */
template <class... T> struct dependent_false { static constexpr bool value = false; };
template <int V> struct dependent_false_v { static constexpr bool value = false; };

} // namespace npuemu

#endif /* NPUEMU_CONTEXT_H */
