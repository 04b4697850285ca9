// Small collectives enqueued back to back without synchronizing in between, as a training
// loop does with loss scalars and flags: a rank may run ahead of its peers (its operations
// finish later, in order), so this checks that every output is right, in place or not,
// and that whatever comes next on the stream (a copy, an event, a query loop, destroying
// the stream) sees the results. Large ones too: a rank returns from a large collective
// once its own part is done, its peers possibly still writing its output.
//   hccl_runahead ROOTINFO_FILE [mismatch|killed|opposite|opposite-sizes|freed]
// rank/size from RANK_ID/RANK_SIZE. Prints "hccl_runahead rank R/N passed" and exits 0, or
// "FAIL ..." and 1. With "mismatch", rank 1 passes a different count to one tiny AllReduce
// after many good ones: every rank must get an error naming it (at the call or at the next
// synchronize) and exits 3. With "killed", the last rank kills itself in the middle of
// the small AllReduces: every other rank must fail (exit 3) within HCCL_EXEC_TIMEOUT, with
// a message naming the dead rank, instead of hanging. With "opposite", two communicators
// (the second from ROOTINFO_FILE.b), each on its own stream: even ranks call a small
// AllReduce on the first then on the second, odd ranks the other way round, 20 times; on
// CANN each call only queues on its stream, so this runs. "opposite-sizes" does the same
// with AllReduce on one and AllGather on the other, at 8 B, 2 KiB and 1 MiB per rank.
// With "freed", each rank frees the output buffer of 100 small AllReduces before it
// synchronizes: the synchronize either succeeds (every one had finished) or fails with a
// message saying the buffer was freed (exit 3) -- never a write into freed memory.
#include <acl/acl.h>
#include <hccl/hccl.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

static int rank_, n_;

#define ACHECK(call)                                                                           \
    do {                                                                                       \
        int e_ = (call);                                                                       \
        if (e_ != 0) {                                                                         \
            const char *m_ = aclGetRecentErrMsg();                                             \
            fprintf(stderr, "FAIL rank %d %s:%d: %s returned %d: %s\n", rank_, __FILE__,        \
                    __LINE__, #call, e_, m_ ? m_ : "");                                        \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)
// A call that fails in the mismatch scenario: report and exit 3.
#define EXPECT_FAIL_OK(call)                                                                   \
    do {                                                                                       \
        int e_ = (call);                                                                       \
        if (e_ != 0) {                                                                         \
            const char *m_ = aclGetRecentErrMsg();                                             \
            printf("rank %d: %s -> %d: %s\n", rank_, #call, e_, m_ ? m_ : "");                  \
            fflush(stdout);                                                                    \
            exit(3);                                                                           \
        }                                                                                      \
    } while (0)
#define CHECK(cond, ...)                                                                       \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "FAIL rank %d line %d: ", rank_, __LINE__);                        \
            fprintf(stderr, __VA_ARGS__);                                                      \
            fprintf(stderr, "\n");                                                             \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

static HcclRootInfo root_info(const char *file) {
    HcclRootInfo ri;
    if (rank_ == 0) {
        ACHECK(HcclGetRootInfo(&ri));
        std::string tmp = std::string(file) + ".tmp";
        FILE *f = fopen(tmp.c_str(), "wb");
        fwrite(&ri, sizeof ri, 1, f);
        fclose(f);
        rename(tmp.c_str(), file);
    } else {
        FILE *f = nullptr;
        for (int i = 0; i < 3000 && !(f = fopen(file, "rb")); i++) usleep(10000);
        if (!f || fread(&ri, sizeof ri, 1, f) != 1) {
            fprintf(stderr, "cannot read %s\n", file);
            exit(1);
        }
        fclose(f);
    }
    return ri;
}

template <typename T> static std::vector<T> download(const void *dev, size_t count) {
    std::vector<T> v(count);
    ACHECK(aclrtMemcpy(v.data(), count * sizeof(T), dev, count * sizeof(T), ACL_MEMCPY_DEVICE_TO_HOST));
    return v;
}

template <typename T> static void upload(void *dev, const std::vector<T> &v) {
    ACHECK(aclrtMemcpy(dev, v.size() * sizeof(T), v.data(), v.size() * sizeof(T), ACL_MEMCPY_HOST_TO_DEVICE));
}

// aclrtStreamQuery until the stream reports complete (at most 60 s).
static void query_until_complete(aclrtStream s) {
    auto t0 = std::chrono::steady_clock::now();
    for (;;) {
        aclrtStreamStatus st;
        ACHECK(aclrtStreamQuery(s, &st));
        if (st == ACL_STREAM_STATUS_COMPLETE) break;
        CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60), "stream never completes");
        usleep(100);
    }
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: hccl_runahead ROOTINFO_FILE [mismatch]\n");
        return 2;
    }
    bool mismatch = argc > 2 && std::string(argv[2]) == "mismatch";
    bool killed = argc > 2 && std::string(argv[2]) == "killed";
    bool opposite = argc > 2 && std::string(argv[2]) == "opposite";
    bool freed = argc > 2 && std::string(argv[2]) == "freed";
    bool opposite_sizes = argc > 2 && std::string(argv[2]) == "opposite-sizes";
    rank_ = atoi(getenv("RANK_ID"));
    n_ = atoi(getenv("RANK_SIZE"));
    const int64_t n = n_, r = rank_;
    ACHECK(aclInit(nullptr));
    ACHECK(aclrtSetDevice(rank_ % 8));
    HcclRootInfo ri = root_info(argv[1]);
    HcclComm comm;
    ACHECK(HcclCommInitRootInfo(n_, &ri, rank_, &comm));
    aclrtStream s;
    ACHECK(aclrtCreateStream(&s));
    if (freed) {
        void *fin, *fout;
        ACHECK(aclrtMalloc(&fin, 100 * 8, ACL_MEM_MALLOC_HUGE_FIRST));
        ACHECK(aclrtMalloc(&fout, 100 * 8, ACL_MEM_MALLOC_HUGE_FIRST));
        upload(fin, std::vector<int64_t>(100, 1));
        for (int i = 0; i < 100; i++)
            ACHECK(HcclAllReduce((char *)fin + 8 * i, (char *)fout + 8 * i, 1, HCCL_DATA_TYPE_INT64,
                                 HCCL_REDUCE_SUM, comm, s));
        ACHECK(aclrtFree(fout));
        EXPECT_FAIL_OK(aclrtSynchronizeStream(s));
        printf("hccl_runahead rank %d/%d passed (nothing was pending)\n", rank_, n_);
        return 0;
    }
    if (opposite_sizes) {
        // Opposite orders with every size class: tiny (8 bytes), small (2 KiB, through the
        // inline buffers) and large (1 MiB, direct), AllReduce and AllGather, each checked.
        HcclRootInfo rib = root_info((std::string(argv[1]) + ".b").c_str());
        HcclComm comm_b;
        ACHECK(HcclCommInitRootInfo(n_, &rib, rank_, &comm_b));
        aclrtStream sb;
        ACHECK(aclrtCreateStream(&sb));
        const uint64_t counts[] = {1, 256, 131072, 256, 131072, 1};
        const int rounds = 6;
        std::vector<void *> a(rounds), b(rounds), g(rounds);
        for (int i = 0; i < rounds; i++) {
            uint64_t c = counts[i];
            ACHECK(aclrtMalloc(&a[i], c * 8, ACL_MEM_MALLOC_HUGE_FIRST));
            ACHECK(aclrtMalloc(&b[i], c * 8, ACL_MEM_MALLOC_HUGE_FIRST));
            ACHECK(aclrtMalloc(&g[i], c * 8 * n_, ACL_MEM_MALLOC_HUGE_FIRST));
            std::vector<int64_t> va(c), vb(c);
            for (uint64_t k = 0; k < c; k++) {
                va[k] = (r + 1) * (int64_t)(k + i);
                vb[k] = (r + 1) * 1000 + (int64_t)k;
            }
            upload(a[i], va);
            upload(b[i], vb);
        }
        for (int i = 0; i < rounds; i++) {
            uint64_t c = counts[i];
            auto on_a = [&] {
                ACHECK(HcclAllReduce(a[i], a[i], c, HCCL_DATA_TYPE_INT64, HCCL_REDUCE_SUM, comm, s));
            };
            auto on_b = [&] {
                ACHECK(HcclAllGather(b[i], g[i], c, HCCL_DATA_TYPE_INT64, comm_b, sb));
            };
            if (rank_ % 2 == 0) {
                on_a();
                on_b();
            } else {
                // The odd ranks come late as well: their peers give up waiting at the call.
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
                on_b();
                on_a();
            }
        }
        ACHECK(aclrtSynchronizeStream(s));
        ACHECK(aclrtSynchronizeStream(sb));
        for (int i = 0; i < rounds; i++) {
            uint64_t c = counts[i];
            std::vector<int64_t> va = download<int64_t>(a[i], c), vg = download<int64_t>(g[i], c * n_);
            for (uint64_t k = 0; k < c; k++)
                CHECK(va[k] == n * (n + 1) / 2 * (int64_t)(k + i), "comm A round %d [%llu]: %lld", i,
                      (unsigned long long)k, (long long)va[k]);
            for (int64_t q = 0; q < n; q++)
                for (uint64_t k = 0; k < c; k++)
                    CHECK(vg[q * c + k] == (q + 1) * 1000 + (int64_t)k, "comm B round %d from rank %lld [%llu]: %lld",
                          i, (long long)q, (unsigned long long)k, (long long)vg[q * c + k]);
        }
        ACHECK(HcclCommDestroy(comm_b));
        ACHECK(HcclCommDestroy(comm));
        ACHECK(aclrtDestroyStream(sb));
        ACHECK(aclrtDestroyStream(s));
        ACHECK(aclFinalize());
        printf("hccl_runahead rank %d/%d passed (opposite orders, every size)\n", rank_, n_);
        return 0;
    }
    if (opposite) {
        HcclRootInfo rib = root_info((std::string(argv[1]) + ".b").c_str());
        HcclComm comm_b;
        ACHECK(HcclCommInitRootInfo(n_, &rib, rank_, &comm_b));
        aclrtStream sb;
        ACHECK(aclrtCreateStream(&sb));
        const int rounds = 20;
        void *xa, *xb;
        ACHECK(aclrtMalloc(&xa, rounds * 8, ACL_MEM_MALLOC_HUGE_FIRST));
        ACHECK(aclrtMalloc(&xb, rounds * 8, ACL_MEM_MALLOC_HUGE_FIRST));
        std::vector<int64_t> va(rounds), vb(rounds);
        for (int i = 0; i < rounds; i++) {
            va[i] = (r + 1) * (i + 1);
            vb[i] = (r + 1) * 1000 + i;
        }
        upload(xa, va);
        upload(xb, vb);
        for (int i = 0; i < rounds; i++) {
            void *a = (char *)xa + 8 * i, *b = (char *)xb + 8 * i;
            if (rank_ % 2 == 0) {
                ACHECK(HcclAllReduce(a, a, 1, HCCL_DATA_TYPE_INT64, HCCL_REDUCE_SUM, comm, s));
                ACHECK(HcclAllReduce(b, b, 1, HCCL_DATA_TYPE_INT64, HCCL_REDUCE_SUM, comm_b, sb));
            } else {
                ACHECK(HcclAllReduce(b, b, 1, HCCL_DATA_TYPE_INT64, HCCL_REDUCE_SUM, comm_b, sb));
                ACHECK(HcclAllReduce(a, a, 1, HCCL_DATA_TYPE_INT64, HCCL_REDUCE_SUM, comm, s));
            }
        }
        ACHECK(aclrtSynchronizeStream(s));
        ACHECK(aclrtSynchronizeStream(sb));
        va = download<int64_t>(xa, rounds);
        vb = download<int64_t>(xb, rounds);
        for (int i = 0; i < rounds; i++) {
            CHECK(va[i] == n * (n + 1) / 2 * (i + 1), "comm A round %d: %lld", i, (long long)va[i]);
            CHECK(vb[i] == 1000 * n * (n + 1) / 2 + n * i, "comm B round %d: %lld", i, (long long)vb[i]);
        }
        ACHECK(HcclCommDestroy(comm_b));
        ACHECK(HcclCommDestroy(comm));
        ACHECK(aclrtDestroyStream(sb));
        ACHECK(aclrtDestroyStream(s));
        ACHECK(aclFinalize());
        printf("hccl_runahead rank %d/%d passed (opposite orders)\n", rank_, n_);
        return 0;
    }

    // 1. 300 tiny AllReduces (more than any ring of fingerprints), each from its own input
    //    slot into its own output slot, then one synchronize.
    const int K = 300;
    void *in, *out;
    ACHECK(aclrtMalloc(&in, K * 8, ACL_MEM_MALLOC_HUGE_FIRST));
    ACHECK(aclrtMalloc(&out, K * 8 * 8, ACL_MEM_MALLOC_HUGE_FIRST));
    std::vector<float> inv(K * 2);
    for (int i = 0; i < K; i++) {
        inv[2 * i] = (float)((r + 1) * (i + 1));
        inv[2 * i + 1] = (float)(r == i % n ? i : -1);
    }
    upload(in, inv);
    ACHECK(aclrtMemset(out, K * 64, 0, K * 64));
    for (int i = 0; i < K; i++) {
        char *src = (char *)in + 8 * i;
        char *dst = (char *)out + 8 * i;
        HcclReduceOp op = i % 3 == 0 ? HCCL_REDUCE_SUM : HCCL_REDUCE_MAX;
        if (killed && rank_ == n_ - 1 && i == K / 2) raise(SIGKILL);
        if (mismatch && i == K - 5) {
            EXPECT_FAIL_OK(HcclAllReduce(src, dst, rank_ == 1 ? 1 : 2, HCCL_DATA_TYPE_FP32, op, comm, s));
        } else {
            EXPECT_FAIL_OK(HcclAllReduce(src, dst, 2, HCCL_DATA_TYPE_FP32, op, comm, s));
        }
    }
    EXPECT_FAIL_OK(aclrtSynchronizeStream(s));
    CHECK(!mismatch && !killed, "the fault was not reported");
    std::vector<float> got = download<float>(out, K * 2);
    for (int i = 0; i < K; i++) {
        float want0 = i % 3 == 0 ? (float)(n * (n + 1) / 2 * (i + 1)) : (float)(n * (i + 1));
        float want1 = i % 3 == 0 ? (float)(i - (n - 1)) : (float)i;
        CHECK(got[2 * i] == want0 && got[2 * i + 1] == want1, "AllReduce #%d: got (%g, %g), want (%g, %g)", i,
              got[2 * i], got[2 * i + 1], want0, want1);
    }

    // 2. An in-place chain: each AllReduce reads what the previous one wrote.
    void *x;
    ACHECK(aclrtMalloc(&x, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    upload(x, std::vector<int64_t>{1});
    const int chain = 12;
    for (int i = 0; i < chain; i++) {
        ACHECK(HcclAllReduce(x, x, 1, HCCL_DATA_TYPE_INT64, HCCL_REDUCE_SUM, comm, s));
    }
    ACHECK(aclrtSynchronizeStream(s));
    int64_t want = 1;
    for (int i = 0; i < chain; i++) want *= n;
    int64_t chained = download<int64_t>(x, 1)[0];
    CHECK(chained == want, "in-place chain: got %lld, want %lld", (long long)chained, (long long)want);

    // 3. Mixed small kinds back to back: Broadcast, AllGather, ReduceScatter, Reduce.
    void *b, *g, *rs_in, *rs_out, *red;
    ACHECK(aclrtMalloc(&b, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    ACHECK(aclrtMalloc(&g, 8 * 64, ACL_MEM_MALLOC_HUGE_FIRST));
    ACHECK(aclrtMalloc(&rs_in, 8 * 64, ACL_MEM_MALLOC_HUGE_FIRST));
    ACHECK(aclrtMalloc(&rs_out, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    ACHECK(aclrtMalloc(&red, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    upload(b, std::vector<int32_t>{rank_ == 0 ? 77 : -1});
    upload(g, std::vector<int32_t>(n_, -1));
    std::vector<int8_t> rsv(n_);
    for (int p = 0; p < n_; p++) rsv[p] = (int8_t)(p + rank_);
    upload(rs_in, rsv);
    upload(red, std::vector<int32_t>{0});
    const int32_t mine = 100 + rank_;
    void *mine_dev;
    ACHECK(aclrtMalloc(&mine_dev, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    upload(mine_dev, std::vector<int32_t>{mine});
    for (int round = 0; round < 40; round++) {
        ACHECK(HcclBroadcast(b, 1, HCCL_DATA_TYPE_INT32, 0, comm, s));
        ACHECK(HcclAllGather(mine_dev, g, 1, HCCL_DATA_TYPE_INT32, comm, s));
        ACHECK(HcclReduceScatter(rs_in, rs_out, 1, HCCL_DATA_TYPE_INT8, HCCL_REDUCE_SUM, comm, s));
        ACHECK(HcclReduce(mine_dev, red, 1, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, 0, comm, s));
    }
    ACHECK(aclrtSynchronizeStream(s));
    CHECK(download<int32_t>(b, 1)[0] == 77, "broadcast");
    std::vector<int32_t> gv = download<int32_t>(g, n_);
    for (int p = 0; p < n_; p++) CHECK(gv[p] == 100 + p, "allgather block %d: %d", p, gv[p]);
    int8_t rsg = download<int8_t>(rs_out, 1)[0];
    CHECK(rsg == (int8_t)(n * r + n * (n - 1) / 2), "reducescatter: %d", rsg);
    if (rank_ == 0) {
        int32_t rv = download<int32_t>(red, 1)[0];
        CHECK(rv == (int32_t)(100 * n + n * (n - 1) / 2), "reduce: %d", rv);
    }

    // 4. What comes next on the stream sees the results: an asynchronous copy of the output.
    void *copy;
    ACHECK(aclrtMalloc(&copy, 64, ACL_MEM_MALLOC_HUGE_FIRST));
    upload(x, std::vector<int64_t>{r + 1});
    ACHECK(HcclAllReduce(x, x, 1, HCCL_DATA_TYPE_INT64, HCCL_REDUCE_SUM, comm, s));
    ACHECK(aclrtMemcpyAsync(copy, 8, x, 8, ACL_MEMCPY_DEVICE_TO_DEVICE, s));
    ACHECK(aclrtSynchronizeStream(s));
    CHECK(download<int64_t>(copy, 1)[0] == n * (n + 1) / 2, "copy after AllReduce: %lld",
          (long long)download<int64_t>(copy, 1)[0]);

    // 5. An event recorded after it, then waited for.
    aclrtEvent ev;
    ACHECK(aclrtCreateEvent(&ev));
    upload(x, std::vector<int64_t>{2 * (r + 1)});
    ACHECK(HcclAllReduce(x, x, 1, HCCL_DATA_TYPE_INT64, HCCL_REDUCE_SUM, comm, s));
    ACHECK(aclrtRecordEvent(ev, s));
    ACHECK(aclrtSynchronizeEvent(ev));
    CHECK(download<int64_t>(x, 1)[0] == n * (n + 1), "event after AllReduce");

    // 6. aclrtStreamQuery until complete, then a synchronous copy without synchronizing.
    upload(x, std::vector<int64_t>{3 * (r + 1)});
    ACHECK(HcclAllReduce(x, x, 1, HCCL_DATA_TYPE_INT64, HCCL_REDUCE_SUM, comm, s));
    query_until_complete(s);
    CHECK(download<int64_t>(x, 1)[0] == 3 * n * (n + 1) / 2, "query then read");

    // 7. Destroying the stream right after: the AllReduce still completes.
    aclrtStream s2;
    ACHECK(aclrtCreateStream(&s2));
    upload(x, std::vector<int64_t>{4 * (r + 1)});
    ACHECK(HcclAllReduce(x, x, 1, HCCL_DATA_TYPE_INT64, HCCL_REDUCE_SUM, comm, s2));
    ACHECK(aclrtDestroyStream(s2));
    CHECK(download<int64_t>(x, 1)[0] == 2 * n * (n + 1), "destroy stream after AllReduce");

    // 8. A big collective after small ones, and small ones again after it.
    const size_t big = 1 << 20;
    void *bi, *bo;
    ACHECK(aclrtMalloc(&bi, big * 4, ACL_MEM_MALLOC_HUGE_FIRST));
    ACHECK(aclrtMalloc(&bo, big * 4, ACL_MEM_MALLOC_HUGE_FIRST));
    upload(bi, std::vector<float>(big, (float)(r + 1)));
    upload(x, std::vector<int64_t>{1});
    for (int i = 0; i < 5; i++) ACHECK(HcclAllReduce(x, x, 1, HCCL_DATA_TYPE_INT64, HCCL_REDUCE_SUM, comm, s));
    ACHECK(HcclAllReduce(bi, bo, big, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s));
    for (int i = 0; i < 5; i++) ACHECK(HcclAllReduce(x, x, 1, HCCL_DATA_TYPE_INT64, HCCL_REDUCE_SUM, comm, s));
    ACHECK(aclrtSynchronizeStream(s));
    std::vector<float> bov = download<float>(bo, big);
    CHECK(bov[0] == (float)(n * (n + 1) / 2) && bov[big - 1] == bov[0], "big AllReduce: %g", bov[0]);
    int64_t w10 = 1;
    for (int i = 0; i < 10; i++) w10 *= n;
    CHECK(download<int64_t>(x, 1)[0] == w10, "small around big: %lld", (long long)download<int64_t>(x, 1)[0]);

    // 10. Large collectives back to back, without synchronizing in between: each rank does
    //     its own part at the call and returns, its peers possibly still reading its input
    //     and writing its output; the stream waits for them. Distinct outputs, AllGatherV
    //     (per-peer arrays) among AllReduces and AllGathers, an in-place chain, then a
    //     query loop, an event, and destroying the communicator right after one.
    {
        const size_t L = 1 << 16; // 256 KiB of int32 per rank: direct at any rank count
        const int R = 12;
        std::vector<void *> lin(R), lout(R);
        std::vector<uint64_t> vcounts(n_), vdispls(n_);
        for (int q = 0, at = 0; q < n_; q++) {
            vcounts[q] = L / (q + 1);
            vdispls[q] = at;
            at += (int)vcounts[q] + 3;
        }
        for (int i = 0; i < R; i++) {
            ACHECK(aclrtMalloc(&lin[i], L * 4, ACL_MEM_MALLOC_HUGE_FIRST));
            ACHECK(aclrtMalloc(&lout[i], (L + 3) * 4 * n_, ACL_MEM_MALLOC_HUGE_FIRST));
            std::vector<int32_t> v(L);
            for (size_t k = 0; k < L; k++) v[k] = (int32_t)((r + 1) * (int64_t)(k % 1000 + i));
            upload(lin[i], v);
        }
        for (int i = 0; i < R; i++) {
            if (i % 3 == 0) {
                ACHECK(HcclAllReduce(lin[i], lout[i], L, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, comm, s));
            } else if (i % 3 == 1) {
                ACHECK(HcclAllGather(lin[i], lout[i], L, HCCL_DATA_TYPE_INT32, comm, s));
            } else {
                ACHECK(HcclAllGatherV(lin[i], vcounts[rank_], lout[i], vcounts.data(), vdispls.data(),
                                      HCCL_DATA_TYPE_INT32, comm, s));
            }
        }
        void *cx;
        ACHECK(aclrtMalloc(&cx, L * 8, ACL_MEM_MALLOC_HUGE_FIRST));
        std::vector<int64_t> cv(L);
        for (size_t k = 0; k < L; k++) cv[k] = (r + 1) * (int64_t)(k % 7 + 1);
        upload(cx, cv);
        const int links = 6;
        for (int i = 0; i < links; i++)
            ACHECK(HcclAllReduce(cx, cx, L, HCCL_DATA_TYPE_INT64, HCCL_REDUCE_SUM, comm, s));
        ACHECK(aclrtSynchronizeStream(s));
        for (int i = 0; i < R; i++) {
            std::vector<int32_t> got = download<int32_t>(lout[i], (L + 3) * n_);
            for (int64_t q = 0; q < n; q++) {
                size_t cnt = i % 3 == 0 ? (q == 0 ? L : 0) : i % 3 == 1 ? L : vcounts[q];
                size_t at = i % 3 == 1 ? q * L : i % 3 == 2 ? vdispls[q] : 0;
                for (size_t k = 0; k < cnt; k++) {
                    int64_t want = i % 3 == 0 ? n * (n + 1) / 2 * (int64_t)(k % 1000 + i)
                                              : (q + 1) * (int64_t)(k % 1000 + i);
                    CHECK(got[at + k] == (int32_t)want, "large collective #%d (%s) from rank %lld [%zu]: %d, want %lld",
                          i, i % 3 == 0 ? "AllReduce" : i % 3 == 1 ? "AllGather" : "AllGatherV", (long long)q, k,
                          got[at + k], (long long)want);
                }
            }
        }
        std::vector<int64_t> chained = download<int64_t>(cx, L);
        int64_t f = n * (n + 1) / 2;
        for (int i = 1; i < links; i++) f *= n;
        for (size_t k = 0; k < L; k++)
            CHECK(chained[k] == f * (int64_t)(k % 7 + 1), "large in-place chain [%zu]: %lld, want %lld", k,
                  (long long)chained[k], (long long)(f * (int64_t)(k % 7 + 1)));

        // A query loop, then an event, each after one large AllReduce.
        for (int way = 0; way < 2; way++) {
            upload(cx, cv);
            ACHECK(HcclAllReduce(cx, cx, L, HCCL_DATA_TYPE_INT64, HCCL_REDUCE_SUM, comm, s));
            if (way == 0) {
                query_until_complete(s);
            } else {
                aclrtEvent e2;
                ACHECK(aclrtCreateEvent(&e2));
                ACHECK(aclrtRecordEvent(e2, s));
                ACHECK(aclrtSynchronizeEvent(e2));
                ACHECK(aclrtDestroyEvent(e2));
            }
            std::vector<int64_t> once = download<int64_t>(cx, L);
            for (size_t k = 0; k < L; k++)
                CHECK(once[k] == n * (n + 1) / 2 * (int64_t)(k % 7 + 1), "large AllReduce then %s [%zu]: %lld",
                      way == 0 ? "query" : "event", k, (long long)once[k]);
        }
        for (int i = 0; i < R; i++) {
            ACHECK(aclrtFree(lin[i]));
            ACHECK(aclrtFree(lout[i]));
        }
        ACHECK(aclrtFree(cx));
    }

    // 9. Destroying the communicator right after a small collective, then finalizing.
    //    And right after a large one: the communicator waits for its peers first.
    upload(x, std::vector<int64_t>{5});
    upload(bi, std::vector<float>(big, (float)(r + 2)));
    ACHECK(HcclAllReduce(x, x, 1, HCCL_DATA_TYPE_INT64, HCCL_REDUCE_SUM, comm, s));
    ACHECK(HcclAllReduce(bi, bo, big, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, s));
    ACHECK(HcclCommDestroy(comm));
    ACHECK(aclrtSynchronizeStream(s));
    CHECK(download<int64_t>(x, 1)[0] == 5 * n, "destroy comm after AllReduce");
    bov = download<float>(bo, big);
    CHECK(bov[0] == (float)(n * (n + 3) / 2) && bov[big - 1] == bov[0], "destroy comm after a big AllReduce: %g",
          bov[0]);
    ACHECK(aclrtDestroyStream(s));
    ACHECK(aclFinalize());
    printf("hccl_runahead rank %d/%d passed\n", rank_, n_);
    return 0;
}
