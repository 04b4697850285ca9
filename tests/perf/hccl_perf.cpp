/*
 * hccl-perf: an nccl-tests-style benchmark for HCCL collectives.
 *
 *   hccl-perf -o allreduce -d fp32 -r sum -b 8 -e 128M -f 2 -w 5 -n 20 -c 1
 *
 * Each rank is one process: start them with `npu-emu run -n N hccl-perf ...` (rank table from
 * RANK_TABLE_FILE, RANK_ID, RANK_SIZE, device ASCEND_DEVICE_ID) or, for the build with MPI
 * (hccl-perf-mpi, -DHAVE_MPI), with `mpirun -np N hccl-perf-mpi ...` (root info broadcast over
 * MPI). With --mpi, hccl-perf-mpi also times the same sweep with MPI_Allreduce / Allgather /
 * Reduce_scatter_block / Bcast / Alltoall on host buffers, in the same run, and prints both.
 *
 * Sizes follow nccl-tests: for allreduce and broadcast the size is each rank's buffer; for
 * allgather the size of the gathered output; for reducescatter the size of each rank's input;
 * for alltoall each rank's send buffer. algbw = size / time; busbw = algbw * factor with
 * allreduce 2(n-1)/n, allgather and reducescatter (n-1)/n, broadcast 1, alltoall (n-1)/n.
 * Time is the slowest rank's average per iteration (max over ranks through HcclAllReduce).
 *
 * Inputs are small integers chosen per type and rank count so that every result is exact
 * whatever order the reduction adds in, so the check (-c 1) compares bit for bit; #wrong is
 * the number of wrong elements summed over ranks.
 */
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "hccl/hccl.h"

#ifdef HAVE_MPI
#define OMPI_SKIP_MPICXX 1 /* the C API only: the C++ bindings do not build with -Werror */
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

static int g_rank = 0;
static int g_size = 1;

[[noreturn]] static void Die(const char *fmt, const char *a = "", long b = 0)
{
    std::fprintf(stderr, "hccl-perf: rank %d: ", g_rank);
    std::fprintf(stderr, fmt, a, b);
    std::fprintf(stderr, "\n");
#ifdef HAVE_MPI
    MPI_Abort(MPI_COMM_WORLD, 1);
#endif
    std::exit(1);
}

#define CHECK_ACL(call)                                                                       \
    do {                                                                                      \
        aclError err_ = (call);                                                               \
        if (err_ != ACL_SUCCESS) {                                                            \
            const char *m_ = aclGetRecentErrMsg();                                            \
            std::fprintf(stderr, "hccl-perf: rank %d: %s returned %d: %s\n", g_rank, #call,   \
                         (int)err_, m_ ? m_ : "");                                            \
            std::exit(1);                                                                     \
        }                                                                                     \
    } while (0)

#define CHECK_HCCL(call)                                                                      \
    do {                                                                                      \
        HcclResult r_ = (call);                                                               \
        if (r_ != HCCL_SUCCESS) {                                                             \
            std::fprintf(stderr, "hccl-perf: rank %d: %s returned %d (%s)\n", g_rank, #call,  \
                         (int)r_, HcclGetErrorString(r_));                                    \
            std::exit(1);                                                                     \
        }                                                                                     \
    } while (0)

/* ---------------------------------------------------------------- types and values */

enum Op { OP_ALLREDUCE, OP_ALLGATHER, OP_REDUCESCATTER, OP_BROADCAST, OP_ALLTOALL };
static const char *kOpNames[] = {"allreduce", "allgather", "reducescatter", "broadcast",
                                 "alltoall"};

struct TypeInfo {
    const char *name;
    HcclDataType hccl;
    size_t size;
    double exactLimit; /* largest integer magnitude held exactly (and without overflow) */
    bool isSigned;
#ifdef HAVE_MPI
    MPI_Datatype mpi; /* MPI_DATATYPE_NULL: no MPI equivalent (fp16, bf16) */
#endif
};

#ifdef HAVE_MPI
#define MPIT(x) , x
#else
#define MPIT(x)
#endif

static const TypeInfo kTypes[] = {
    {"int8", HCCL_DATA_TYPE_INT8, 1, 127, true MPIT(MPI_INT8_T)},
    {"uint8", HCCL_DATA_TYPE_UINT8, 1, 255, false MPIT(MPI_UINT8_T)},
    {"int16", HCCL_DATA_TYPE_INT16, 2, 32767, true MPIT(MPI_INT16_T)},
    {"uint16", HCCL_DATA_TYPE_UINT16, 2, 65535, false MPIT(MPI_UINT16_T)},
    {"int32", HCCL_DATA_TYPE_INT32, 4, 1e6, true MPIT(MPI_INT32_T)},
    {"uint32", HCCL_DATA_TYPE_UINT32, 4, 1e6, false MPIT(MPI_UINT32_T)},
    {"int64", HCCL_DATA_TYPE_INT64, 8, 1e6, true MPIT(MPI_INT64_T)},
    {"uint64", HCCL_DATA_TYPE_UINT64, 8, 1e6, false MPIT(MPI_UINT64_T)},
    {"fp16", HCCL_DATA_TYPE_FP16, 2, 2048, true MPIT(MPI_DATATYPE_NULL)},
    {"bf16", HCCL_DATA_TYPE_BFP16, 2, 256, true MPIT(MPI_DATATYPE_NULL)},
    {"fp32", HCCL_DATA_TYPE_FP32, 4, 1e6, true MPIT(MPI_FLOAT)},
    {"fp64", HCCL_DATA_TYPE_FP64, 8, 1e6, true MPIT(MPI_DOUBLE)},
};

static const char *kRedNames[] = {"sum", "prod", "max", "min"};

/* float <-> half / bfloat16 for values that are exactly representable (small integers). */
static uint16_t FloatToHalf(float f)
{
    uint32_t x;
    std::memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u;
    int32_t exp = static_cast<int32_t>((x >> 23) & 0xff) - 127 + 15;
    uint32_t mant = x & 0x7fffffu;
    if ((x & 0x7fffffffu) == 0) {
        return static_cast<uint16_t>(sign);
    }
    return static_cast<uint16_t>(sign | (static_cast<uint32_t>(exp) << 10) | (mant >> 13));
}
static float HalfToFloat(uint16_t h)
{
    uint32_t sign = (h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t mant = h & 0x3ffu;
    uint32_t x;
    if (exp == 0 && mant == 0) {
        x = sign;
    } else if (exp == 0) { /* subnormal: not produced by our inputs; decode anyway */
        float v = std::ldexp(static_cast<float>(mant), -24);
        return (h & 0x8000u) ? -v : v;
    } else if (exp == 31) {
        x = sign | 0x7f800000u | (mant << 13);
    } else {
        x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
    }
    float f;
    std::memcpy(&f, &x, 4);
    return f;
}
static uint16_t FloatToBf16(float f)
{
    uint32_t x;
    std::memcpy(&x, &f, 4);
    return static_cast<uint16_t>(x >> 16);
}
static float Bf16ToFloat(uint16_t b)
{
    uint32_t x = static_cast<uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &x, 4);
    return f;
}

static void Store(const TypeInfo &t, void *base, size_t i, double v)
{
    switch (t.hccl) {
    case HCCL_DATA_TYPE_INT8: static_cast<int8_t *>(base)[i] = static_cast<int8_t>(v); break;
    case HCCL_DATA_TYPE_UINT8: static_cast<uint8_t *>(base)[i] = static_cast<uint8_t>(v); break;
    case HCCL_DATA_TYPE_INT16: static_cast<int16_t *>(base)[i] = static_cast<int16_t>(v); break;
    case HCCL_DATA_TYPE_UINT16: static_cast<uint16_t *>(base)[i] = static_cast<uint16_t>(v); break;
    case HCCL_DATA_TYPE_INT32: static_cast<int32_t *>(base)[i] = static_cast<int32_t>(v); break;
    case HCCL_DATA_TYPE_UINT32: static_cast<uint32_t *>(base)[i] = static_cast<uint32_t>(v); break;
    case HCCL_DATA_TYPE_INT64: static_cast<int64_t *>(base)[i] = static_cast<int64_t>(v); break;
    case HCCL_DATA_TYPE_UINT64: static_cast<uint64_t *>(base)[i] = static_cast<uint64_t>(v); break;
    case HCCL_DATA_TYPE_FP16: static_cast<uint16_t *>(base)[i] = FloatToHalf(static_cast<float>(v)); break;
    case HCCL_DATA_TYPE_BFP16: static_cast<uint16_t *>(base)[i] = FloatToBf16(static_cast<float>(v)); break;
    case HCCL_DATA_TYPE_FP32: static_cast<float *>(base)[i] = static_cast<float>(v); break;
    case HCCL_DATA_TYPE_FP64: static_cast<double *>(base)[i] = v; break;
    default: Die("unsupported type");
    }
}

static double Load(const TypeInfo &t, const void *base, size_t i)
{
    switch (t.hccl) {
    case HCCL_DATA_TYPE_INT8: return static_cast<const int8_t *>(base)[i];
    case HCCL_DATA_TYPE_UINT8: return static_cast<const uint8_t *>(base)[i];
    case HCCL_DATA_TYPE_INT16: return static_cast<const int16_t *>(base)[i];
    case HCCL_DATA_TYPE_UINT16: return static_cast<const uint16_t *>(base)[i];
    case HCCL_DATA_TYPE_INT32: return static_cast<const int32_t *>(base)[i];
    case HCCL_DATA_TYPE_UINT32: return static_cast<const uint32_t *>(base)[i];
    case HCCL_DATA_TYPE_INT64: return static_cast<double>(static_cast<const int64_t *>(base)[i]);
    case HCCL_DATA_TYPE_UINT64: return static_cast<double>(static_cast<const uint64_t *>(base)[i]);
    case HCCL_DATA_TYPE_FP16: return HalfToFloat(static_cast<const uint16_t *>(base)[i]);
    case HCCL_DATA_TYPE_BFP16: return Bf16ToFloat(static_cast<const uint16_t *>(base)[i]);
    case HCCL_DATA_TYPE_FP32: return static_cast<const float *>(base)[i];
    case HCCL_DATA_TYPE_FP64: return static_cast<const double *>(base)[i];
    default: Die("unsupported type");
    }
}

/* The input value of element `idx` of rank `rank`: small integers, so that sums over all ranks
 * stay within the exact range of the type and every reduction order gives the same bits. */
static double Value(const TypeInfo &t, int red, int rank, uint64_t idx, int nranks)
{
    const uint64_t mix = static_cast<uint64_t>(rank) * 7u + idx * 3u + 1u;
    switch (red) {
    case HCCL_REDUCE_PROD:
        return (mix % 4 == 0) ? 2.0 : 1.0; /* products are powers of two <= 2^(n/4+1) */
    case HCCL_REDUCE_MAX:
    case HCCL_REDUCE_MIN: {
        double k = std::min(t.exactLimit, 1000.0);
        double v = static_cast<double>(mix % (static_cast<uint64_t>(k) + 1));
        return (t.isSigned && (mix & 8)) ? -v : v;
    }
    default: {
        uint64_t k = static_cast<uint64_t>(t.exactLimit / nranks);
        if (k < 1) {
            k = 1;
        }
        if (k > 1000) {
            k = 1000;
        }
        return static_cast<double>(mix % (k + 1));
    }
    }
}

static double Fold(int red, double a, double b)
{
    switch (red) {
    case HCCL_REDUCE_PROD: return a * b;
    case HCCL_REDUCE_MAX: return std::max(a, b);
    case HCCL_REDUCE_MIN: return std::min(a, b);
    default: return a + b;
    }
}

static double Reduced(const TypeInfo &t, int red, uint64_t idx, int nranks)
{
    double acc = Value(t, red, 0, idx, nranks);
    for (int r = 1; r < nranks; ++r) {
        acc = Fold(red, acc, Value(t, red, r, idx, nranks));
    }
    return acc;
}

/* ---------------------------------------------------------------- options */

struct Options {
    std::vector<Op> ops{OP_ALLREDUCE};
    const TypeInfo *type = &kTypes[10]; /* fp32 */
    int red = HCCL_REDUCE_SUM;
    uint64_t minBytes = 8;
    uint64_t maxBytes = 128u << 20;
    double factor = 2;
    std::vector<uint64_t> sizes; /* --sizes overrides -b/-e/-f */
    int warmup = 5;
    int iters = 20;
    uint64_t iterBytes = 0; /* -I: iterations per size capped at iterBytes/size (>= 2) */
    int check = 1;
    bool mpi = false;
    bool mpiOnly = false; /* --mpi-only: time MPI alone (no ACL/HCCL) */
    bool percentiles = false; /* -P: per-call time percentiles of the HCCL side */
};

static uint64_t ParseBytes(const char *s)
{
    char *end = nullptr;
    double v = std::strtod(s, &end);
    if (end == s || v < 0) {
        Die("bad size \"%s\": expected bytes such as 8, 64K, 8M, 1G", s);
    }
    switch (*end) {
    case 'k': case 'K': v *= 1024; ++end; break;
    case 'm': case 'M': v *= 1024 * 1024; ++end; break;
    case 'g': case 'G': v *= 1024.0 * 1024 * 1024; ++end; break;
    default: break;
    }
    if (*end == 'B' || *end == 'b') {
        ++end;
    }
    if (*end != '\0') {
        Die("bad size \"%s\": expected bytes such as 8, 64K, 8M, 1G", s);
    }
    return static_cast<uint64_t>(v);
}

static void Usage()
{
    std::printf(
        "usage: hccl-perf [-o OPS] [-d TYPE] [-r REDOP] [-b MIN] [-e MAX] [-f FACTOR] [--sizes LIST]\n"
        "                 [-w WARMUP] [-n ITERS] [-I BYTES] [-c 0|1] [--mpi]\n"
        "  -o  allreduce|allgather|reducescatter|broadcast|alltoall, or a comma list (allreduce)\n"
        "  -d  int8|uint8|int16|uint16|int32|uint32|int64|uint64|fp16|bf16|fp32|fp64 (fp32)\n"
        "  -r  sum|prod|max|min (sum)\n"
        "  -b, -e, -f  size sweep from MIN to MAX bytes, multiplying by FACTOR (8, 128M, 2)\n"
        "  --sizes 64K,8M,128M  explicit sizes instead of the sweep\n"
        "  -w, -n  warm-up and timed iterations per size (5, 20)\n"
        "  -I BYTES  cap iterations at BYTES/size (at least 2): few iterations for big sizes\n"
        "  -c 1  check results (default); 0 skips the check\n"
        "  -P     also print, per rank, percentiles of the time of each HCCL call (the call\n"
        "         alone: a collective that completes at its call, such as a small one on an\n"
        "         idle stream, is timed whole; one queued on a busy stream is not)\n"
        "  --mpi  also time the same sweep with MPI on host buffers (hccl-perf-mpi only)\n"
        "  --mpi-only  time only MPI (no ACL/HCCL; hccl-perf-mpi only)\n");
}

static Options Parse(int argc, char **argv)
{
    Options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto val = [&]() -> const char * {
            if (i + 1 >= argc) {
                Die("option %s needs a value", a.c_str());
            }
            return argv[++i];
        };
        if (a == "-h" || a == "--help") {
            Usage();
            std::exit(0);
        } else if (a == "-o") {
            o.ops.clear();
            std::string list = val();
            size_t pos = 0;
            while (pos <= list.size()) {
                size_t comma = list.find(',', pos);
                std::string name = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
                bool found = false;
                for (int k = 0; k < 5; ++k) {
                    if (name == kOpNames[k]) {
                        o.ops.push_back(static_cast<Op>(k));
                        found = true;
                    }
                }
                if (!found) {
                    Die("unknown operation \"%s\": expected allreduce, allgather, reducescatter, "
                        "broadcast or alltoall", name.c_str());
                }
                if (comma == std::string::npos) {
                    break;
                }
                pos = comma + 1;
            }
        } else if (a == "-d") {
            const char *n = val();
            o.type = nullptr;
            for (const TypeInfo &t : kTypes) {
                if (std::strcmp(t.name, n) == 0) {
                    o.type = &t;
                }
            }
            if (o.type == nullptr) {
                Die("unknown type \"%s\": expected int8, uint8, int16, uint16, int32, uint32, "
                    "int64, uint64, fp16, bf16, fp32 or fp64", n);
            }
        } else if (a == "-r") {
            const char *n = val();
            o.red = -1;
            for (int k = 0; k < 4; ++k) {
                if (std::strcmp(kRedNames[k], n) == 0) {
                    o.red = k;
                }
            }
            if (o.red < 0) {
                Die("unknown reduce op \"%s\": expected sum, prod, max or min", n);
            }
        } else if (a == "-b") {
            o.minBytes = ParseBytes(val());
        } else if (a == "-e") {
            o.maxBytes = ParseBytes(val());
        } else if (a == "-f") {
            o.factor = std::atof(val());
            if (!(o.factor > 1.0)) {
                Die("-f %s: the factor must be greater than 1", argv[i]);
            }
        } else if (a == "--sizes") {
            std::string list = val();
            size_t pos = 0;
            while (true) {
                size_t comma = list.find(',', pos);
                std::string s = list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
                o.sizes.push_back(ParseBytes(s.c_str()));
                if (comma == std::string::npos) {
                    break;
                }
                pos = comma + 1;
            }
        } else if (a == "-w") {
            o.warmup = std::atoi(val());
        } else if (a == "-n") {
            o.iters = std::max(1, std::atoi(val()));
        } else if (a == "-I") {
            o.iterBytes = ParseBytes(val());
        } else if (a == "-c") {
            o.check = std::atoi(val());
        } else if (a == "-P") {
            o.percentiles = true;
        } else if (a == "--mpi") {
#ifndef HAVE_MPI
            Die("--mpi needs hccl-perf-mpi (this binary was built without MPI)");
#endif
            o.mpi = true;
        } else if (a == "--mpi-only") {
#ifndef HAVE_MPI
            Die("--mpi-only needs hccl-perf-mpi (this binary was built without MPI)");
#endif
            o.mpi = o.mpiOnly = true;
        } else {
            Die("unknown option \"%s\" (see --help)", a.c_str());
        }
    }
    if (o.sizes.empty()) {
        for (double s = static_cast<double>(o.minBytes); s <= static_cast<double>(o.maxBytes);
             s *= o.factor) {
            o.sizes.push_back(static_cast<uint64_t>(s));
        }
    }
    return o;
}

/* ---------------------------------------------------------------- one size */

struct Shape {
    uint64_t count;     /* the count passed to the operation */
    uint64_t sendElems; /* elements in each rank's send buffer */
    uint64_t recvElems; /* elements in each rank's receive buffer */
    uint64_t bytes;     /* the size reported (nccl-tests convention) */
};

static Shape ShapeOf(Op op, uint64_t bytes, size_t tsize, int n)
{
    Shape s{};
    const uint64_t elems = bytes / tsize;
    switch (op) {
    case OP_ALLREDUCE:
    case OP_BROADCAST:
        s.count = elems;
        s.sendElems = s.recvElems = elems;
        s.bytes = elems * tsize;
        break;
    case OP_ALLGATHER:
        s.count = elems / n;
        s.sendElems = s.count;
        s.recvElems = s.count * n;
        s.bytes = s.recvElems * tsize;
        break;
    case OP_REDUCESCATTER:
        s.count = elems / n;
        s.sendElems = s.count * n;
        s.recvElems = s.count;
        s.bytes = s.sendElems * tsize;
        break;
    case OP_ALLTOALL:
        s.count = elems / n;
        s.sendElems = s.recvElems = s.count * n;
        s.bytes = s.sendElems * tsize;
        break;
    }
    return s;
}

static double BusFactor(Op op, int n)
{
    switch (op) {
    case OP_ALLREDUCE: return 2.0 * (n - 1) / n;
    case OP_BROADCAST: return 1.0;
    default: return static_cast<double>(n - 1) / n;
    }
}

/* Fill this rank's input for `op`. */
static void FillInput(const Options &o, Op op, const Shape &s, void *host, int rank, int n)
{
    const TypeInfo &t = *o.type;
    for (uint64_t i = 0; i < s.sendElems; ++i) {
        double v;
        if (op == OP_BROADCAST) {
            v = (rank == 0) ? Value(t, HCCL_REDUCE_SUM, 0, i, n) : 0;
        } else if (op == OP_ALLTOALL) {
            /* block p goes to rank p: encode (sender, receiver, index) */
            uint64_t p = i / std::max<uint64_t>(s.count, 1);
            v = Value(t, HCCL_REDUCE_SUM, rank * n + static_cast<int>(p), i % std::max<uint64_t>(s.count, 1), n * n);
        } else if (op == OP_ALLGATHER) {
            v = Value(t, HCCL_REDUCE_SUM, rank, i, n);
        } else {
            v = Value(t, o.red, rank, i, n);
        }
        Store(t, host, i, v);
    }
}

/* Count wrong elements of this rank's output. */
static uint64_t CountWrong(const Options &o, Op op, const Shape &s, const void *host, int rank, int n)
{
    const TypeInfo &t = *o.type;
    uint64_t wrong = 0;
    const uint64_t c = std::max<uint64_t>(s.count, 1);
    for (uint64_t i = 0; i < s.recvElems; ++i) {
        double want;
        switch (op) {
        case OP_ALLREDUCE: want = Reduced(t, o.red, i, n); break;
        case OP_REDUCESCATTER: want = Reduced(t, o.red, rank * s.count + i, n); break;
        case OP_BROADCAST: want = Value(t, HCCL_REDUCE_SUM, 0, i, n); break;
        case OP_ALLGATHER: want = Value(t, HCCL_REDUCE_SUM, static_cast<int>(i / c), i % c, n); break;
        default: /* alltoall: block p came from rank p, which encoded (p, rank, index) */
            want = Value(t, HCCL_REDUCE_SUM, static_cast<int>(i / c) * n + rank, i % c, n * n);
            break;
        }
        /* Round `want` through the type, as the device holds it. */
        double w = 0;
        Store(t, &w, 0, want);
        if (Load(t, host, i) != Load(t, &w, 0)) {
            ++wrong;
        }
    }
    return wrong;
}

struct Ctx {
    HcclComm comm = nullptr;
    aclrtStream stream = nullptr;
    void *send = nullptr;
    void *recv = nullptr;
    uint64_t cap = 0; /* bytes of each device buffer */
    void *scratch = nullptr; /* 16 bytes of device memory for the timing reduction */
};

static void Launch(const Options &o, Op op, const Shape &s, Ctx &c)
{
    const HcclDataType dt = o.type->hccl;
    switch (op) {
    case OP_ALLREDUCE:
        CHECK_HCCL(HcclAllReduce(c.send, c.recv, s.count, dt, static_cast<HcclReduceOp>(o.red), c.comm, c.stream));
        break;
    case OP_ALLGATHER:
        CHECK_HCCL(HcclAllGather(c.send, c.recv, s.count, dt, c.comm, c.stream));
        break;
    case OP_REDUCESCATTER:
        CHECK_HCCL(HcclReduceScatter(c.send, c.recv, s.count, dt, static_cast<HcclReduceOp>(o.red), c.comm, c.stream));
        break;
    case OP_BROADCAST:
        CHECK_HCCL(HcclBroadcast(c.send, s.count, dt, 0, c.comm, c.stream));
        break;
    case OP_ALLTOALL:
        CHECK_HCCL(HcclAlltoAll(c.send, s.count, dt, c.recv, s.count, dt, c.comm, c.stream));
        break;
    }
}

/* max over ranks of `v` (microseconds), and sum over ranks of `w`, through HCCL. */
static void ReduceStats(Ctx &c, double &v, uint64_t &w)
{
    int64_t in[2] = {static_cast<int64_t>(std::llround(v * 1000.0)), static_cast<int64_t>(w)};
    int64_t out[2] = {0, 0};
    CHECK_ACL(aclrtMemcpy(c.scratch, 16, in, 16, ACL_MEMCPY_HOST_TO_DEVICE));
    void *s1 = static_cast<char *>(c.scratch) + 16;
    CHECK_HCCL(HcclAllReduce(c.scratch, s1, 1, HCCL_DATA_TYPE_INT64, HCCL_REDUCE_MAX, c.comm, c.stream));
    CHECK_HCCL(HcclAllReduce(static_cast<char *>(c.scratch) + 8, static_cast<char *>(c.scratch) + 24, 1,
                             HCCL_DATA_TYPE_INT64, HCCL_REDUCE_SUM, c.comm, c.stream));
    CHECK_ACL(aclrtSynchronizeStream(c.stream));
    CHECK_ACL(aclrtMemcpy(out, 16, s1, 16, ACL_MEMCPY_DEVICE_TO_HOST));
    v = static_cast<double>(out[0]) / 1000.0;
    w = static_cast<uint64_t>(out[1]);
}

static int ItersFor(const Options &o, uint64_t bytes)
{
    if (o.iterBytes == 0 || bytes == 0) {
        return o.iters;
    }
    uint64_t cap = std::max<uint64_t>(2, o.iterBytes / bytes);
    return static_cast<int>(std::min<uint64_t>(cap, static_cast<uint64_t>(o.iters)));
}

static int WarmupFor(const Options &o, int iters)
{
    return std::min(o.warmup, std::max(1, iters / 4 + 1));
}

struct Result {
    double us = 0;
    uint64_t wrong = 0;
    bool skipped = false;
};

static Result RunHccl(const Options &o, Op op, const Shape &s, Ctx &c, std::vector<char> &host)
{
    Result r;
    const size_t ts = o.type->size;
    const int iters = ItersFor(o, s.bytes);
    FillInput(o, op, s, host.data(), g_rank, g_size);
    if (s.sendElems > 0) {
        CHECK_ACL(aclrtMemcpy(c.send, c.cap, host.data(), s.sendElems * ts, ACL_MEMCPY_HOST_TO_DEVICE));
    }
    for (int i = 0; i < WarmupFor(o, iters); ++i) {
        Launch(o, op, s, c);
    }
    CHECK_HCCL(HcclBarrier(c.comm, c.stream));
    CHECK_ACL(aclrtSynchronizeStream(c.stream));
    std::vector<double> per;
    if (o.percentiles) {
        per.reserve(static_cast<size_t>(iters));
    }
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) {
        if (o.percentiles) {
            auto a = std::chrono::steady_clock::now();
            Launch(o, op, s, c);
            per.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - a).count());
        } else {
            Launch(o, op, s, c);
        }
    }
    CHECK_ACL(aclrtSynchronizeStream(c.stream));
    auto t1 = std::chrono::steady_clock::now();
    if (o.percentiles) {
        std::sort(per.begin(), per.end());
        auto at = [&](double q) { return per[std::min(per.size() - 1, static_cast<size_t>(q * per.size()))]; };
        double total = 0, slow = 0;
        int nslow = 0;
        for (double v : per) {
            total += v;
            if (v > 10 * at(0.5)) {
                slow += v;
                ++nslow;
            }
        }
        std::fprintf(stderr,
                     "# rank %d: per call (us) p50 %.2f p90 %.2f p99 %.2f p99.9 %.2f max %.1f; "
                     "%d calls over 10x p50 take %.0f%% of the time\n",
                     g_rank, at(0.5), at(0.9), at(0.99), at(0.999), per.back(), nslow,
                     total > 0 ? 100.0 * slow / total : 0.0);
    }
    r.us = std::chrono::duration<double, std::micro>(t1 - t0).count() / iters;

    if (o.check) {
        /* Fresh inputs (broadcast is in place), one more operation, then compare. */
        FillInput(o, op, s, host.data(), g_rank, g_size);
        if (s.sendElems > 0) {
            CHECK_ACL(aclrtMemcpy(c.send, c.cap, host.data(), s.sendElems * ts, ACL_MEMCPY_HOST_TO_DEVICE));
        }
        if (op != OP_BROADCAST && s.recvElems > 0) {
            CHECK_ACL(aclrtMemset(c.recv, c.cap, 0x5a, s.recvElems * ts));
        }
        Launch(o, op, s, c);
        CHECK_ACL(aclrtSynchronizeStream(c.stream));
        void *out = (op == OP_BROADCAST) ? c.send : c.recv;
        if (s.recvElems > 0) {
            CHECK_ACL(aclrtMemcpy(host.data(), host.size(), out, s.recvElems * ts, ACL_MEMCPY_DEVICE_TO_HOST));
        }
        r.wrong = CountWrong(o, op, s, host.data(), g_rank, g_size);
    }
    ReduceStats(c, r.us, r.wrong);
    return r;
}

#ifdef HAVE_MPI
static Result RunMpi(const Options &o, Op op, const Shape &s, std::vector<char> &sendHost,
                     std::vector<char> &recvHost)
{
    Result r;
    MPI_Datatype dt = o.type->mpi;
    if (dt == MPI_DATATYPE_NULL) {
        r.skipped = true;
        return r;
    }
    MPI_Op mop = o.red == HCCL_REDUCE_PROD ? MPI_PROD
                 : o.red == HCCL_REDUCE_MAX ? MPI_MAX
                 : o.red == HCCL_REDUCE_MIN ? MPI_MIN
                                            : MPI_SUM;
    const int count = static_cast<int>(s.count);
    auto launch = [&]() {
        switch (op) {
        case OP_ALLREDUCE: MPI_Allreduce(sendHost.data(), recvHost.data(), count, dt, mop, MPI_COMM_WORLD); break;
        case OP_ALLGATHER: MPI_Allgather(sendHost.data(), count, dt, recvHost.data(), count, dt, MPI_COMM_WORLD); break;
        case OP_REDUCESCATTER: MPI_Reduce_scatter_block(sendHost.data(), recvHost.data(), count, dt, mop, MPI_COMM_WORLD); break;
        case OP_BROADCAST: MPI_Bcast(sendHost.data(), count, dt, 0, MPI_COMM_WORLD); break;
        case OP_ALLTOALL: MPI_Alltoall(sendHost.data(), count, dt, recvHost.data(), count, dt, MPI_COMM_WORLD); break;
        }
    };
    const int iters = ItersFor(o, s.bytes);
    FillInput(o, op, s, sendHost.data(), g_rank, g_size);
    for (int i = 0; i < WarmupFor(o, iters); ++i) {
        launch();
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; ++i) {
        launch();
    }
    double us = (MPI_Wtime() - t0) * 1e6 / iters;
    if (o.check) {
        FillInput(o, op, s, sendHost.data(), g_rank, g_size);
        std::memset(recvHost.data(), 0x5a, recvHost.size());
        launch();
        r.wrong = CountWrong(o, op, s, op == OP_BROADCAST ? sendHost.data() : recvHost.data(), g_rank, g_size);
    }
    unsigned long long w = r.wrong, wsum = 0;
    MPI_Allreduce(&us, &r.us, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&w, &wsum, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    r.wrong = wsum;
    return r;
}
#endif

static void PrintResult(const Result &r, const Shape &s, Op op)
{
    if (r.skipped) {
        std::printf("  %10s %8s %8s %7s", "n/a", "", "", "");
        return;
    }
    double algbw = r.us > 0 ? static_cast<double>(s.bytes) / (r.us * 1e3) : 0; /* GB/s */
    double busbw = algbw * BusFactor(op, g_size);
    std::printf("  %10.2f %8.2f %8.2f %7llu", r.us, algbw, busbw, (unsigned long long)r.wrong);
}

int main(int argc, char **argv)
{
#ifdef HAVE_MPI
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
#endif
    Options o = Parse(argc, argv);
    const char *rankTable = std::getenv("RANK_TABLE_FILE");
#ifndef HAVE_MPI
    const char *rid = std::getenv("RANK_ID");
    const char *rsz = std::getenv("RANK_SIZE");
    if (rankTable == nullptr || rid == nullptr || rsz == nullptr) {
        Die("RANK_TABLE_FILE, RANK_ID and RANK_SIZE must be set: start the ranks with "
            "`npu-emu run -n N hccl-perf ...` (or use hccl-perf-mpi under mpirun)%s", "");
    }
    g_rank = std::atoi(rid);
    g_size = std::atoi(rsz);
#endif

    uint64_t maxBytes = 0;
    for (uint64_t s : o.sizes) {
        maxBytes = std::max(maxBytes, s);
    }
    Ctx c;
    c.cap = std::max<uint64_t>(maxBytes, 64);
    int device = 0;
    std::vector<char> host;
    if (!o.mpiOnly) {
        CHECK_ACL(aclInit(nullptr));
        uint32_t devices = 0;
        CHECK_ACL(aclrtGetDeviceCount(&devices));
        device = g_rank % static_cast<int>(devices);
        if (const char *d = std::getenv("ASCEND_DEVICE_ID")) {
            device = std::atoi(d);
        }
        CHECK_ACL(aclrtSetDevice(device));
#ifdef HAVE_MPI
        (void)rankTable;
        HcclRootInfo root;
        if (g_rank == 0) {
            CHECK_HCCL(HcclGetRootInfo(&root));
        }
        MPI_Bcast(&root, sizeof(root), MPI_BYTE, 0, MPI_COMM_WORLD);
        CHECK_HCCL(HcclCommInitRootInfo(static_cast<uint32_t>(g_size), &root,
                                        static_cast<uint32_t>(g_rank), &c.comm));
#else
        CHECK_HCCL(HcclCommInitClusterInfo(rankTable, static_cast<uint32_t>(g_rank), &c.comm));
#endif
        CHECK_ACL(aclrtCreateStream(&c.stream));
        CHECK_ACL(aclrtMalloc(&c.send, c.cap, ACL_MEM_MALLOC_HUGE_FIRST));
        CHECK_ACL(aclrtMalloc(&c.recv, c.cap, ACL_MEM_MALLOC_HUGE_FIRST));
        CHECK_ACL(aclrtMalloc(&c.scratch, 32, ACL_MEM_MALLOC_HUGE_FIRST));
        host.resize(c.cap);
    }
#ifdef HAVE_MPI
    std::vector<char> mpiSend(o.mpi ? c.cap : 0), mpiRecv(o.mpi ? c.cap : 0);
#endif

    if (g_rank == 0) {
        std::printf("# hccl-perf: %d ranks, type %s, redop %s, warmup %d, iters %d%s, check %d%s\n",
                    g_size, o.type->name, kRedNames[o.red], o.warmup, o.iters,
                    o.iterBytes ? " (capped by -I)" : "", o.check, o.mpi ? ", MPI side by side" : "");
        std::printf("# time: the slowest rank's average per iteration; algbw = size/time; "
                    "busbw = algbw x nccl-tests factor\n");
    }
    uint64_t totalWrong = 0;
    for (Op op : o.ops) {
        if (g_rank == 0) {
            std::printf("#\n# %s\n", kOpNames[op]);
            std::printf("# %12s %11s %6s %5s  %10s %8s %8s %7s", "size(B)", "count", "type", "redop",
                        "time(us)", "algbw", "busbw", "#wrong");
            if (o.mpi) {
                std::printf("  | %10s %8s %8s %7s", "mpi(us)", "algbw", "busbw", "#wrong");
            }
            std::printf("\n");
        }
        for (uint64_t bytes : o.sizes) {
            Shape s = ShapeOf(op, bytes, o.type->size, g_size);
            Result r;
            r.skipped = true;
            if (!o.mpiOnly) {
                r = RunHccl(o, op, s, c, host);
                totalWrong += r.wrong;
            }
#ifdef HAVE_MPI
            Result m;
            if (o.mpi) {
                m = RunMpi(o, op, s, mpiSend, mpiRecv);
                totalWrong += m.wrong;
            }
#endif
            if (g_rank == 0) {
                const bool reduces = op == OP_ALLREDUCE || op == OP_REDUCESCATTER;
                std::printf("  %12llu %11llu %6s %5s", (unsigned long long)s.bytes,
                            (unsigned long long)s.count, o.type->name, reduces ? kRedNames[o.red] : "-");
                PrintResult(r, s, op);
#ifdef HAVE_MPI
                if (o.mpi) {
                    std::printf("  |");
                    PrintResult(m, s, op);
                }
#endif
                std::printf("\n");
                std::fflush(stdout);
            }
        }
    }
    if (g_rank == 0) {
        std::printf("# total #wrong: %llu\n", (unsigned long long)totalWrong);
    }

    if (!o.mpiOnly) {
        CHECK_ACL(aclrtFree(c.send));
        CHECK_ACL(aclrtFree(c.recv));
        CHECK_ACL(aclrtFree(c.scratch));
        CHECK_ACL(aclrtDestroyStream(c.stream));
        CHECK_HCCL(HcclCommDestroy(c.comm));
        CHECK_ACL(aclrtResetDevice(device));
        CHECK_ACL(aclFinalize());
    }
#ifdef HAVE_MPI
    MPI_Finalize();
#endif
    return totalWrong == 0 ? 0 : 1;
}
