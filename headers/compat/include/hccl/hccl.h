/*
 * npu-emu compatibility layer: the HCCL "dialect" of the seed documents, on top of the real API.
 *
 * NOT PART OF CANN. Real CANN has none of these names; our real headers (headers/include) reject
 * them exactly as CANN's do. This directory is opt-in: put it on the include path BEFORE the
 * real one,
 *
 *     g++ -I<repo>/headers/compat/include -I$ASCEND_HOME_PATH/include ...
 *
 * and `#include "hccl/hccl.h"` finds this file, which includes the real header (#include_next)
 * and adds, as inline C++ over the public ACL/HCCL API only (so it also builds against a real
 * CANN install):
 *
 *   HCCL_SUM                         an HcclReduceOp equal to HCCL_REDUCE_SUM
 *   get_data_type_size(aclDataType)  bytes per element (aclDataTypeSize)
 *   hcclInit(rank, size, group, &comm)
 *                                    forms a communicator of `size` ranks named `group`
 *   hcclAllReduce(send, recv, count, dataType, op, comm, stream)
 *                                    HcclAllReduce; dataType may be an aclDataType
 *   hcclBroadcast(send, recv, count, dataType, root, comm, stream)
 *                                    broadcast with separate buffers (NCCL style): the root
 *                                    copies send -> recv, then every rank receives into recv;
 *                                    `send` is read on the root only
 *
 * How hcclInit finds its peers (a root-info rendezvous through the node's shared memory):
 *   - The job is identified by NPU_EMU_JOB_ID, which `npu-emu run` exports to every rank.
 *     Ranks started another way (mpirun, by hand) must all be given the same NPU_EMU_JOB_ID
 *     (e.g. `mpirun -x NPU_EMU_JOB_ID=$(date +%s%N) ...`); without it hcclInit fails with
 *     HCCL_E_PARA and says so. A group of size 1 needs no job id.
 *   - Rank 0 of the group calls HcclGetRootInfo and publishes it atomically (write a temporary
 *     file, then rename) as
 *         <node dir>/jobs/<job id>/hcclInit.<group>.<n>
 *     where <node dir> is NPU_EMU_NODE_DIR or /dev/shm/npu-emu-<uid> (the launcher's job
 *     directory, removed when the job ends) and <n> counts this rank's earlier hcclInit calls
 *     for the same group in this process (so a group formed again after HcclCommDestroy never
 *     reads the previous instance's file). The file also holds the group size and rank 0's pid
 *     and process start time.
 *   - Every other rank polls for that file, at most HCCL_CONNECT_TIMEOUT seconds (default
 *     120), ignores a file whose writer is no longer running (left over by an earlier job that
 *     reused the job id), checks that rank 0 was given the same size, and calls
 *     HcclCommInitRootInfo. Rank 0 removes the file once its own HcclCommInitRootInfo returns
 *     (which it does only after every rank has joined, or on error).
 *   - Bad input is HCCL_E_PARA (HCCL_E_PTR for NULL pointers) with a message on stderr in the
 *     CANN log format naming hcclInit and the argument: rank outside 0..size-1, size < 1, an
 *     empty group name or one that is not [A-Za-z0-9_.-]{1,127}, a size different from rank
 *     0's. A missing rank 0 is HCCL_E_TIMEOUT.
 *
 * The layer is C++ only (hcclAllReduce/hcclBroadcast are overloaded on the data type enum).
 */
#ifndef NPU_EMU_COMPAT_HCCL_HCCL_H
#define NPU_EMU_COMPAT_HCCL_HCCL_H

/* #include_next is a GCC/Clang extension: keep -Wpedantic builds of user code quiet. */
#pragma GCC system_header

#include_next <hccl/hccl.h>

#ifndef __cplusplus
#error "the npu-emu HCCL dialect layer (headers/compat) is C++ only; C code uses the real names (HcclCommInitRootInfo, HcclAllReduce, HCCL_REDUCE_SUM, ...)"
#endif

#include <acl/acl.h>

#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The dialect's name for the sum reduction. */
constexpr HcclReduceOp HCCL_SUM = HCCL_REDUCE_SUM;

namespace npuemu_compat {

/* One error line on stderr, in the format of the libraries' own log ([ERROR] HCCL(pid,tid): ...),
 * unless ASCEND_GLOBAL_LOG_LEVEL is 4 (logging off). */
inline void LogError(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
inline void LogError(const char *fmt, ...)
{
    const char *level = std::getenv("ASCEND_GLOBAL_LOG_LEVEL");
    if (level != nullptr && std::strcmp(level, "4") == 0) {
        return;
    }
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    std::fprintf(stderr, "[ERROR] HCCL(%d,%ld): %s\n", static_cast<int>(getpid()),
                 static_cast<long>(syscall(SYS_gettid)), msg);
    std::fflush(stderr);
}

/* The HcclDataType of an aclDataType, or false when HCCL has no such type. */
inline bool ToHcclDataType(aclDataType in, HcclDataType *out)
{
    switch (in) {
    case ACL_INT8: *out = HCCL_DATA_TYPE_INT8; return true;
    case ACL_INT16: *out = HCCL_DATA_TYPE_INT16; return true;
    case ACL_INT32: *out = HCCL_DATA_TYPE_INT32; return true;
    case ACL_FLOAT16: *out = HCCL_DATA_TYPE_FP16; return true;
    case ACL_FLOAT: *out = HCCL_DATA_TYPE_FP32; return true;
    case ACL_INT64: *out = HCCL_DATA_TYPE_INT64; return true;
    case ACL_UINT64: *out = HCCL_DATA_TYPE_UINT64; return true;
    case ACL_UINT8: *out = HCCL_DATA_TYPE_UINT8; return true;
    case ACL_UINT16: *out = HCCL_DATA_TYPE_UINT16; return true;
    case ACL_UINT32: *out = HCCL_DATA_TYPE_UINT32; return true;
    case ACL_DOUBLE: *out = HCCL_DATA_TYPE_FP64; return true;
    case ACL_BF16: *out = HCCL_DATA_TYPE_BFP16; return true;
    default: return false;
    }
}

/* Bytes per element of an HcclDataType (0 for values HCCL does not define). */
inline uint64_t HcclTypeSize(HcclDataType t)
{
    switch (static_cast<int>(t)) {
    case 0: case 7: case 14: case 15: case 16: case 17: return 1; /* INT8 UINT8 HIF8 FP8* */
    case 1: case 3: case 8: case 11: return 2;                     /* INT16 FP16 UINT16 BFP16 */
    case 2: case 4: case 9: return 4;                              /* INT32 FP32 UINT32 */
    case 5: case 6: case 10: return 8;                             /* INT64 UINT64 FP64 */
    case 12: return 16;                                            /* INT128 */
    default: return 0;
    }
}

/* Start time of process `pid` in clock ticks since boot (field 22 of /proc/PID/stat), 0 when
 * the process does not exist. */
inline uint64_t ProcessStartTime(long pid)
{
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = std::fopen(path, "r");
    if (f == nullptr) {
        return 0;
    }
    char buf[1024];
    const size_t n = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    buf[n] = '\0';
    const char *p = std::strrchr(buf, ')'); /* the command name may contain spaces */
    if (p == nullptr) {
        return 0;
    }
    /* After ") " come fields 3 (state) ... 22 (starttime). */
    int field = 2;
    for (++p; *p != '\0' && field < 22; ++p) {
        if (*p == ' ') {
            ++field;
        }
    }
    return field == 22 ? std::strtoull(p, nullptr, 10) : 0;
}

/* What rank 0 publishes. */
struct RendezvousRecord {
    char magic[16]; /* "NPUEMU-HCCLINIT" */
    int32_t size;
    int32_t pid;
    uint64_t startTime;
    HcclRootInfo rootInfo;
};
constexpr char kMagic[16] = "NPUEMU-HCCLINIT";

/* The n-th hcclInit of (group, rank) in this process, counting from 0. */
inline unsigned NextInstance(const std::string &group, int32_t rank)
{
    static std::mutex mu;
    static std::map<std::pair<std::string, int32_t>, unsigned> calls;
    std::lock_guard<std::mutex> lock(mu);
    return calls[std::make_pair(group, rank)]++;
}

inline bool ValidName(const char *s, size_t max)
{
    size_t n = 0;
    for (; s[n] != '\0'; ++n) {
        const char c = s[n];
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                        c == '_' || c == '.' || c == '-';
        if (!ok || n >= max) {
            return false;
        }
    }
    return n > 0 && !(n <= 2 && s[0] == '.' && s[n - 1] == '.');
}

/* HCCL_CONNECT_TIMEOUT in seconds (the libraries' rule: 1..7200, default 120); -1 if invalid. */
inline long ConnectTimeout()
{
    const char *v = std::getenv("HCCL_CONNECT_TIMEOUT");
    if (v == nullptr) {
        return 120;
    }
    char *end = nullptr;
    errno = 0;
    const long s = std::strtol(v, &end, 10);
    while (end != nullptr && (*end == ' ' || *end == '\t' || *end == '\n')) {
        ++end;
    }
    if (errno != 0 || end == v || *end != '\0' || s < 1 || s > 7200) {
        return -1;
    }
    return s;
}

inline double Now()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

/* Reads a complete record from `path`; false while the file is absent or incomplete. */
inline bool ReadRecord(const std::string &path, RendezvousRecord *rec)
{
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return false;
    }
    size_t got = 0;
    char *p = reinterpret_cast<char *>(rec);
    while (got < sizeof *rec) {
        const ssize_t r = read(fd, p + got, sizeof *rec - got);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            break;
        }
        got += static_cast<size_t>(r);
    }
    close(fd);
    return got == sizeof *rec && std::memcmp(rec->magic, kMagic, sizeof kMagic) == 0;
}

/* Writes `rec` to `path` atomically (temporary file + rename). Returns 0 or an errno. */
inline int PublishRecord(const std::string &path, const RendezvousRecord &rec)
{
    const std::string tmp = path + ".tmp." + std::to_string(getpid()) + "." +
                            std::to_string(static_cast<long>(syscall(SYS_gettid)));
    const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        return errno;
    }
    size_t put = 0;
    const char *p = reinterpret_cast<const char *>(&rec);
    while (put < sizeof rec) {
        const ssize_t w = write(fd, p + put, sizeof rec - put);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            const int e = w < 0 ? errno : EIO;
            close(fd);
            unlink(tmp.c_str());
            return e;
        }
        put += static_cast<size_t>(w);
    }
    close(fd);
    if (rename(tmp.c_str(), path.c_str()) != 0) {
        const int e = errno;
        unlink(tmp.c_str());
        return e;
    }
    return 0;
}

} // namespace npuemu_compat

/* Bytes per element of `dataType` (aclDataTypeSize). A type without a byte size (ACL_STRING,
 * ACL_DT_UNDEFINED) is reported on stderr and gives SIZE_MAX, so `bytes / get_data_type_size(t)`
 * is a count of 0 rather than a division by zero; the collective called with that type then
 * fails with HCCL_E_PARA. */
inline size_t get_data_type_size(aclDataType dataType)
{
    const size_t n = aclDataTypeSize(dataType);
    if (n == 0) {
        npuemu_compat::LogError("get_data_type_size: dataType %d has no size in bytes",
                                static_cast<int>(dataType));
        return SIZE_MAX;
    }
    return n;
}

/* Forms a communicator of `size` ranks named `group` among the ranks of the job; this caller is
 * rank `rank`. The device must already be set (aclrtSetDevice). See the top of this file for
 * how the ranks find each other. */
inline HcclResult hcclInit(int32_t rank, int32_t size, const char *group, HcclComm *comm)
{
    using namespace npuemu_compat;
    if (comm == nullptr) {
        LogError("hcclInit: comm is NULL: expected the address of an HcclComm to receive the communicator");
        return HCCL_E_PTR;
    }
    if (group == nullptr) {
        LogError("hcclInit: group is NULL: expected a group name such as \"default_hccl_group\"");
        return HCCL_E_PTR;
    }
    if (size < 1) {
        LogError("hcclInit: size %d is invalid: expected the number of ranks of group \"%s\", at least 1",
                 static_cast<int>(size), group);
        return HCCL_E_PARA;
    }
    if (rank < 0 || rank >= size) {
        LogError("hcclInit: rank %d is out of range for size %d: expected 0..%d", static_cast<int>(rank),
                 static_cast<int>(size), static_cast<int>(size) - 1);
        return HCCL_E_PARA;
    }
    if (!ValidName(group, COMM_NAME_MAX_LENGTH - 1)) {
        LogError("hcclInit: group name \"%.200s\" is invalid: expected 1 to %u characters from A-Z a-z 0-9 _ . -",
                 group, COMM_NAME_MAX_LENGTH - 1);
        return HCCL_E_PARA;
    }
    const unsigned instance = NextInstance(group, rank);
    if (size == 1) { /* no peers to find */
        HcclRootInfo info;
        HcclResult ret = HcclGetRootInfo(&info);
        if (ret != HCCL_SUCCESS) {
            return ret;
        }
        return HcclCommInitRootInfo(1, &info, 0, comm);
    }

    const char *job = std::getenv("NPU_EMU_JOB_ID");
    if (job == nullptr || *job == '\0') {
        LogError("hcclInit: rank %d of group \"%s\" (size %d) cannot find its peers: NPU_EMU_JOB_ID is not set. "
                 "Start the ranks with `npu-emu run -n N`, which sets it, or give every rank of the job the same "
                 "NPU_EMU_JOB_ID (e.g. mpirun -x NPU_EMU_JOB_ID=$(date +%%s%%N))",
                 static_cast<int>(rank), group, static_cast<int>(size));
        return HCCL_E_PARA;
    }
    if (!ValidName(job, 64)) {
        LogError("hcclInit: NPU_EMU_JOB_ID \"%.100s\" is invalid: expected 1 to 64 characters from A-Z a-z 0-9 _ . -",
                 job);
        return HCCL_E_PARA;
    }
    const long timeout = ConnectTimeout();
    if (timeout < 0) {
        LogError("hcclInit: HCCL_CONNECT_TIMEOUT \"%s\" is invalid: expected seconds from 1 to 7200",
                 std::getenv("HCCL_CONNECT_TIMEOUT"));
        return HCCL_E_PARA;
    }
    const char *nodeEnv = std::getenv("NPU_EMU_NODE_DIR");
    const std::string node = (nodeEnv != nullptr && *nodeEnv != '\0')
                                 ? std::string(nodeEnv)
                                 : "/dev/shm/npu-emu-" + std::to_string(static_cast<unsigned long>(getuid()));
    const std::string jobs = node + "/jobs";
    const std::string dir = jobs + "/" + job;
    const std::string path = dir + "/hcclInit." + group + "." + std::to_string(instance);

    if (rank == 0) {
        RendezvousRecord rec;
        std::memset(&rec, 0, sizeof rec);
        std::memcpy(rec.magic, kMagic, sizeof kMagic);
        rec.size = size;
        rec.pid = static_cast<int32_t>(getpid());
        rec.startTime = ProcessStartTime(getpid());
        HcclResult ret = HcclGetRootInfo(&rec.rootInfo);
        if (ret != HCCL_SUCCESS) {
            return ret;
        }
        mkdir(node.c_str(), 0700);
        mkdir(jobs.c_str(), 0700);
        const bool createdDir = mkdir(dir.c_str(), 0700) == 0;
        const int err = PublishRecord(path, rec);
        if (err != 0) {
            LogError("hcclInit: rank 0 of group \"%s\" cannot publish its root info as %s: %s", group,
                     path.c_str(), std::strerror(err));
            return HCCL_E_SYSCALL;
        }
        ret = HcclCommInitRootInfo(static_cast<uint32_t>(size), &rec.rootInfo, 0, comm);
        /* Every rank has joined (or the init failed): nobody needs the file any more. */
        unlink(path.c_str());
        if (createdDir) {
            rmdir(dir.c_str()); /* only when empty: started outside the launcher */
        }
        return ret;
    }

    const double deadline = Now() + static_cast<double>(timeout);
    useconds_t nap = 1000;
    RendezvousRecord rec;
    for (;;) {
        if (ReadRecord(path, &rec)) {
            const uint64_t start = ProcessStartTime(rec.pid);
            if (start != 0 && start == rec.startTime) {
                break;
            }
            /* Written by a process that has exited: left over from an earlier job. */
        }
        if (Now() >= deadline) {
            LogError("hcclInit: rank %d of group \"%s\" (size %d) timed out after %ld s (HCCL_CONNECT_TIMEOUT) "
                     "waiting for rank 0 to publish the group's root info in %s: did rank 0 of the job call "
                     "hcclInit(0, %d, \"%s\", ...)?",
                     static_cast<int>(rank), group, static_cast<int>(size), timeout, path.c_str(),
                     static_cast<int>(size), group);
            return HCCL_E_TIMEOUT;
        }
        usleep(nap);
        if (nap < 20000) {
            nap *= 2;
        }
    }
    if (rec.size != size) {
        LogError("hcclInit: rank %d of group \"%s\" was called with size %d, but rank 0 (pid %d) with size %d: "
                 "every rank of a group must pass the same size",
                 static_cast<int>(rank), group, static_cast<int>(size), static_cast<int>(rec.pid),
                 static_cast<int>(rec.size));
        return HCCL_E_PARA;
    }
    return HcclCommInitRootInfo(static_cast<uint32_t>(size), &rec.rootInfo, static_cast<uint32_t>(rank), comm);
}

/* HcclAllReduce under the dialect's name. */
inline HcclResult hcclAllReduce(void *sendBuf, void *recvBuf, uint64_t count, HcclDataType dataType,
                                HcclReduceOp op, HcclComm comm, aclrtStream stream)
{
    return HcclAllReduce(sendBuf, recvBuf, count, dataType, op, comm, stream);
}

/* The dialect passes an aclDataType where HCCL takes an HcclDataType (the numbers differ:
 * ACL_FLOAT16 is 1, HCCL_DATA_TYPE_FP16 is 3), so it is translated, not cast. */
inline HcclResult hcclAllReduce(void *sendBuf, void *recvBuf, uint64_t count, aclDataType dataType,
                                HcclReduceOp op, HcclComm comm, aclrtStream stream)
{
    HcclDataType t;
    if (!npuemu_compat::ToHcclDataType(dataType, &t)) {
        npuemu_compat::LogError("hcclAllReduce: dataType %d (aclDataType) has no HCCL equivalent: expected "
                                "ACL_INT8/16/32/64, ACL_UINT8/16/32/64, ACL_FLOAT16, ACL_BF16, ACL_FLOAT or ACL_DOUBLE",
                                static_cast<int>(dataType));
        return HCCL_E_PARA;
    }
    return HcclAllReduce(sendBuf, recvBuf, count, t, op, comm, stream);
}

/* Broadcast with separate buffers: on the root, `sendBuf` is copied to `recvBuf` on `stream`
 * (skipped when they are the same buffer); then HcclBroadcast(recvBuf, ...) fills `recvBuf` on
 * every rank. `sendBuf` is read on the root only. */
inline HcclResult hcclBroadcast(void *sendBuf, void *recvBuf, uint64_t count, HcclDataType dataType,
                                uint32_t root, HcclComm comm, aclrtStream stream)
{
    uint32_t rank = 0;
    HcclResult ret = HcclGetRankId(comm, &rank);
    if (ret != HCCL_SUCCESS) {
        return ret;
    }
    if (rank == root && sendBuf != recvBuf && count > 0) {
        if (sendBuf == nullptr) {
            npuemu_compat::LogError("hcclBroadcast: sendBuf is NULL on the root (rank %u): expected the device buffer "
                                    "to broadcast", rank);
            return HCCL_E_PTR;
        }
        const uint64_t elem = npuemu_compat::HcclTypeSize(dataType);
        if (elem == 0) {
            npuemu_compat::LogError("hcclBroadcast: dataType %d is not an HcclDataType", static_cast<int>(dataType));
            return HCCL_E_PARA;
        }
        if (recvBuf != nullptr) {
            const size_t bytes = static_cast<size_t>(count * elem);
            const aclError e = aclrtMemcpyAsync(recvBuf, bytes, sendBuf, bytes, ACL_MEMCPY_DEVICE_TO_DEVICE, stream);
            if (e != ACL_SUCCESS) {
                const char *why = aclGetRecentErrMsg();
                npuemu_compat::LogError("hcclBroadcast: copying sendBuf to recvBuf on the root (%llu bytes) failed "
                                        "with %d: %s",
                                        static_cast<unsigned long long>(bytes), static_cast<int>(e),
                                        why != nullptr ? why : "(no message)");
                return HCCL_E_RUNTIME;
            }
        }
    }
    return HcclBroadcast(recvBuf, count, dataType, root, comm, stream);
}

inline HcclResult hcclBroadcast(void *sendBuf, void *recvBuf, uint64_t count, aclDataType dataType,
                                uint32_t root, HcclComm comm, aclrtStream stream)
{
    HcclDataType t;
    if (!npuemu_compat::ToHcclDataType(dataType, &t)) {
        npuemu_compat::LogError("hcclBroadcast: dataType %d (aclDataType) has no HCCL equivalent: expected "
                                "ACL_INT8/16/32/64, ACL_UINT8/16/32/64, ACL_FLOAT16, ACL_BF16, ACL_FLOAT or ACL_DOUBLE",
                                static_cast<int>(dataType));
        return HCCL_E_PARA;
    }
    return hcclBroadcast(sendBuf, recvBuf, count, t, root, comm, stream);
}

#endif /* NPU_EMU_COMPAT_HCCL_HCCL_H */
