// Communicator management in one process: error strings, argument checks, configs of
// several versions, rank-table init (good tables and each bad-table error), HcclCommInitAll
// with threads, sub-communicators. Usage: hccl_init WORKDIR (rank tables are written there).
#include <acl/acl.h>
#include <hccl/hccl.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

static int g_checks = 0;

#define ACHECK(call)                                                                        \
    do {                                                                                    \
        aclError e_ = (call);                                                               \
        if (e_ != ACL_SUCCESS) {                                                            \
            const char *m_ = aclGetRecentErrMsg();                                          \
            fprintf(stderr, "FAIL %s:%d: %s returned %d: %s\n", __FILE__, __LINE__, #call,   \
                    (int)e_, m_ ? m_ : "");                                                 \
            exit(1);                                                                        \
        }                                                                                   \
    } while (0)
#define HCHECK(call) EXPECT(call, HCCL_SUCCESS, nullptr)
// The call returns `code` and its message (aclGetRecentErrMsg) contains `sub`.
#define EXPECT(call, code, sub)                                                             \
    do {                                                                                    \
        HcclResult e_ = (call);                                                             \
        const char *m_ = aclGetRecentErrMsg();                                              \
        const char *s_ = (sub);                                                             \
        g_checks++;                                                                         \
        if (e_ != (code)) {                                                                 \
            fprintf(stderr, "FAIL %s:%d: %s returned %d, expected %d: %s\n", __FILE__,      \
                    __LINE__, #call, (int)e_, (int)(code), m_ ? m_ : "(no message)");       \
            exit(1);                                                                        \
        }                                                                                   \
        if (s_ && (!m_ || !strstr(m_, s_))) {                                               \
            fprintf(stderr, "FAIL %s:%d: %s: message \"%s\" lacks \"%s\"\n", __FILE__,       \
                    __LINE__, #call, m_ ? m_ : "(none)", s_);                               \
            exit(1);                                                                        \
        }                                                                                   \
        if (s_) printf("ok %s -> %d: %s\n", #call, (int)e_, m_);                            \
    } while (0)
#define REQUIRE(cond)                                                                       \
    do {                                                                                    \
        g_checks++;                                                                         \
        if (!(cond)) {                                                                      \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);                 \
            exit(1);                                                                        \
        }                                                                                   \
    } while (0)

static std::string g_dir;

static std::string write_table(const char *name, const std::string &text) {
    std::string p = g_dir + "/" + name;
    FILE *f = fopen(p.c_str(), "w");
    fputs(text.c_str(), f);
    fclose(f);
    return p;
}

static std::string table10(const std::string &devices) {
    return "{\"status\":\"completed\",\"version\":\"1.0\",\"server_count\":\"1\",\"server_list\":"
           "[{\"server_id\":\"127.0.0.1\",\"device\":[" + devices + "]}]}";
}

static void test_strings_and_args() {
    REQUIRE(!strcmp(HcclGetErrorString(HCCL_SUCCESS), "no error"));
    REQUIRE(!strcmp(HcclGetErrorString(HCCL_E_PARA), "parameter error"));
    REQUIRE(!strcmp(HcclGetErrorString(HCCL_E_TIMEOUT), "timeout"));
    REQUIRE(!strcmp(HcclGetErrorString(HCCL_E_REMOTE), "error cqe"));
    REQUIRE(!strcmp(HcclGetErrorString((HcclResult)-1), "unknow error"));
    REQUIRE(!strcmp(HcclGetErrorString((HcclResult)5000), "unknow error"));
    REQUIRE(HcclGetCommConfigCapability() == (uint32_t)HCCL_COMM_CONFIG_RESERVED);
    EXPECT(HcclGetRootInfo(nullptr), HCCL_E_PTR, "rootInfo");
    HcclRootInfo ri;
    HcclComm c = nullptr;
    EXPECT(HcclCommInitRootInfo(1, nullptr, 0, &c), HCCL_E_PTR, "rootInfo");
    HCHECK(HcclGetRootInfo(&ri));
    EXPECT(HcclCommInitRootInfo(2, &ri, 2, &c), HCCL_E_PARA, "rank=2 is out of range for nRanks=2");
    EXPECT(HcclCommInitRootInfo(0, &ri, 0, &c), HCCL_E_PARA, "nRanks=0");
    HcclRootInfo junk;
    memset(&junk, 7, sizeof junk);
    EXPECT(HcclCommInitRootInfo(1, &junk, 0, &c), HCCL_E_PARA, "HcclGetRootInfo");
    // HcclSetConfig / HcclGetConfig
    HcclConfigValue v;
    v.value = 1;
    HCHECK(HcclSetConfig(HCCL_DETERMINISTIC, v));
    HcclConfigValue g;
    HCHECK(HcclGetConfig(HCCL_DETERMINISTIC, &g));
    REQUIRE(g.value == 1);
    v.value = 7;
    EXPECT(HcclSetConfig(HCCL_DETERMINISTIC, v), HCCL_E_PARA, "HCCL_DETERMINISTIC");
}

// A one-rank communicator from root info with a config, and the argument checks of ops.
static void test_one_rank(aclrtStream s) {
    HcclRootInfo ri;
    HCHECK(HcclGetRootInfo(&ri));
    HcclCommConfig cfg;
    HcclCommConfigInit(&cfg);
    strcpy(cfg.hcclCommName, "my_comm");
    HcclComm c = nullptr;
    HcclCommConfig bad = cfg;
    memset(bad.reserved + 8, 0, 4);  // magic word
    EXPECT(HcclCommInitRootInfoConfig(1, &ri, 0, &bad, &c), HCCL_E_PARA, "magic");
    HCHECK(HcclCommInitRootInfoConfig(1, &ri, 0, &cfg, &c));
    char name[COMM_NAME_MAX_LENGTH];
    HCHECK(HcclGetCommName(c, name));
    REQUIRE(!strcmp(name, "my_comm"));
    HcclResult ae = HCCL_E_INTERNAL;
    HCHECK(HcclGetCommAsyncError(c, &ae));
    REQUIRE(ae == HCCL_SUCCESS);
    void *buf = nullptr;
    ACHECK(aclrtMalloc(&buf, 4096, ACL_MEM_MALLOC_HUGE_FIRST));
    char host[64];
    /* CANN's CheckDataType / CheckReduceOp: HCCL_E_NOT_SUPPORT with the supported list. */
    EXPECT(HcclAllReduce(buf, buf, 10, (HcclDataType)99, HCCL_REDUCE_SUM, c, s), HCCL_E_NOT_SUPPORT, "dataType=99");
    EXPECT(HcclAllReduce(buf, buf, 10, HCCL_DATA_TYPE_INT128, HCCL_REDUCE_SUM, c, s), HCCL_E_NOT_SUPPORT, "not supported by reductions");
    EXPECT(HcclAllReduce(buf, buf, 10, HCCL_DATA_TYPE_UINT8, HCCL_REDUCE_SUM, c, s), HCCL_E_NOT_SUPPORT, "HCCL_DATA_TYPE_UINT8");
    EXPECT(HcclAllReduce(buf, buf, 10, HCCL_DATA_TYPE_BFP16, HCCL_REDUCE_PROD, c, s), HCCL_E_NOT_SUPPORT, "PROD");
    EXPECT(HcclAllReduce(buf, buf, 10, HCCL_DATA_TYPE_INT16, HCCL_REDUCE_PROD, c, s), HCCL_E_NOT_SUPPORT, "PROD");
    EXPECT(HcclBroadcast(buf, 10, HCCL_DATA_TYPE_INT128, 0, c, s), HCCL_E_NOT_SUPPORT, "INT128");
    EXPECT(HcclAllReduce(buf, buf, 10, HCCL_DATA_TYPE_FP32, (HcclReduceOp)9, c, s), HCCL_E_PARA, "op=9");
    EXPECT(HcclAllReduce(buf, buf, 10, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c, nullptr), HCCL_E_PTR, "stream");
    EXPECT(HcclAllReduce(nullptr, buf, 10, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c, s), HCCL_E_PTR, "sendBuf");
    EXPECT(HcclAllReduce(host, buf, 10, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c, s), HCCL_E_PARA, "sendBuf");
    EXPECT(HcclAllReduce(buf, buf, 5000, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c, s), HCCL_E_PARA, "(20000 bytes)");
    EXPECT(HcclBroadcast(buf, 10, HCCL_DATA_TYPE_FP32, 1, c, s), HCCL_E_PARA, "root=1");
    EXPECT(HcclSend(buf, 10, HCCL_DATA_TYPE_FP32, 0, c, s), HCCL_E_PARA, "destRank=0");
    EXPECT(HcclAlltoAll(buf, 4, HCCL_DATA_TYPE_FP32, buf, 4, HCCL_DATA_TYPE_FP32, c, s), HCCL_E_PARA, "overlap");
    // count 0 succeeds without work, NULL buffers allowed as in CANN.
    HCHECK(HcclAllReduce(nullptr, nullptr, 0, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c, s));
    HCHECK(HcclBarrier(c, s));
    ACHECK(aclrtSynchronizeStream(s));
    uint32_t n = 0;
    EXPECT(HcclGetRankSize(c, nullptr), HCCL_E_PTR, "rankSize");
    HCHECK(HcclCommDestroy(c));
    EXPECT(HcclGetRankSize(c, &n), HCCL_E_PARA, "not a live communicator");
    EXPECT(HcclCommDestroy(c), HCCL_E_PARA, "not a live communicator");
    // CANN skips a NULL comm with a warning: success.
    HCHECK(HcclCommDestroy(nullptr));
    EXPECT(HcclGetRankSize(nullptr, &n), HCCL_E_PTR, "comm");
    ACHECK(aclrtFree(buf));
}

static void test_rank_tables() {
    HcclComm c = nullptr;
    std::string p;
    // Good tables: 1.0, 1.2, legacy. Current device is physical 0.
    p = write_table("t10.json", table10("{\"device_id\":\"0\",\"device_ip\":\"192.168.1.1\",\"rank_id\":\"0\"}"));
    HCHECK(HcclCommInitClusterInfo(p.c_str(), 0, &c));
    char name[COMM_NAME_MAX_LENGTH];
    HCHECK(HcclGetCommName(c, name));
    REQUIRE(!strcmp(name, "hccl_world_group"));
    HCHECK(HcclCommDestroy(c));
    // The same table again (re-init after destroy) works; not while the first is alive.
    HCHECK(HcclCommInitClusterInfo(p.c_str(), 0, &c));
    HcclComm c2 = nullptr;
    EXPECT(HcclCommInitClusterInfo(p.c_str(), 0, &c2), HCCL_E_PARA, "already has a live communicator");
    HCHECK(HcclCommDestroy(c));
    p = write_table("t12.json",
                    "{\"status\":\"completed\",\"version\":\"1.2\",\"server_list\":[{\"server_id\":\"s0\","
                    "\"device\":[{\"device_id\":\"0\",\"super_device_id\":\"0\",\"rank_id\":\"0\"}]}]}");
    HcclCommConfig cfg;
    HcclCommConfigInit(&cfg);
    HCHECK(HcclCommInitClusterInfoConfig(p.c_str(), 0, &cfg, &c));
    HCHECK(HcclCommDestroy(c));
    p = write_table("legacy.json",
                    "{\"status\":\"completed\",\"group_count\":\"1\",\"group_list\":[{\"group_name\":"
                    "\"hccl_world_group\",\"instance_count\":\"1\",\"device_count\":\"1\",\"instance_list\":"
                    "[{\"pod_name\":\"p0\",\"server_id\":\"s0\",\"devices\":[{\"device_id\":\"0\","
                    "\"device_ip\":\"10.0.0.1\"}]}]}]}");
    HCHECK(HcclCommInitClusterInfo(p.c_str(), 0, &c));
    HCHECK(HcclCommDestroy(c));
    // Bad tables, each with its field named.
    p = write_table("numeric.json", table10("{\"device_id\":\"0\",\"rank_id\":0}"));
    EXPECT(HcclCommInitClusterInfo(p.c_str(), 0, &c), HCCL_E_PARA, "server_list[0].device[0].rank_id must be a JSON string");
    p = write_table("numdev.json", table10("{\"device_id\":0,\"rank_id\":\"0\"}"));
    EXPECT(HcclCommInitClusterInfo(p.c_str(), 0, &c), HCCL_E_PARA, "device_id must be a JSON string");
    p = write_table("gap.json", table10("{\"device_id\":\"0\",\"rank_id\":\"0\"},{\"device_id\":\"1\",\"rank_id\":\"2\"}"));
    EXPECT(HcclCommInitClusterInfo(p.c_str(), 0, &c), HCCL_E_PARA, "rank_id \"2\" is out of range");
    p = write_table("dup.json", table10("{\"device_id\":\"0\",\"rank_id\":\"0\"},{\"device_id\":\"1\",\"rank_id\":\"0\"}"));
    EXPECT(HcclCommInitClusterInfo(p.c_str(), 0, &c), HCCL_E_PARA, "rank_id \"0\" is used more than once");
    p = write_table("wrongdev.json", table10("{\"device_id\":\"3\",\"rank_id\":\"0\"}"));
    EXPECT(HcclCommInitClusterInfo(p.c_str(), 0, &c), HCCL_E_UNAVAIL, "device_id \"3\"");
    p = write_table("v11.json", "{\"status\":\"completed\",\"version\":\"1.1\",\"server_list\":[]}");
    EXPECT(HcclCommInitClusterInfo(p.c_str(), 0, &c), HCCL_E_NOT_SUPPORT, "version \"1.1\"");
    p = write_table("init.json", "{\"status\":\"initializing\",\"version\":\"1.0\"}");
    EXPECT(HcclCommInitClusterInfo(p.c_str(), 0, &c), HCCL_E_PARA, "status");
    p = write_table("count.json",
                    "{\"status\":\"completed\",\"version\":\"1.0\",\"server_count\":\"2\",\"server_list\":"
                    "[{\"server_id\":\"a\",\"device\":[{\"device_id\":\"0\",\"rank_id\":\"0\"}]}]}");
    EXPECT(HcclCommInitClusterInfo(p.c_str(), 0, &c), HCCL_E_PARA, "server_count");
    p = write_table("syntax.json", "{\"status\": ");
    EXPECT(HcclCommInitClusterInfo(p.c_str(), 0, &c), HCCL_E_PARA, "not valid JSON");
    p = write_table("t10b.json", table10("{\"device_id\":\"0\",\"rank_id\":\"0\"}"));
    EXPECT(HcclCommInitClusterInfo(p.c_str(), 1, &c), HCCL_E_PARA, "rank=1 is not a rank_id");
    EXPECT(HcclCommInitClusterInfo((g_dir + "/missing.json").c_str(), 0, &c), HCCL_E_OPEN_FILE_FAILURE, "missing.json");
    EXPECT(HcclCommInitClusterInfo(nullptr, 0, &c), HCCL_E_PTR, "clusterInfo");
}

// HcclCommInitAll over 4 devices, one thread each; sub-communicator of ranks {1, 3}.
static void test_init_all_and_sub() {
    const int n = 4;
    int32_t devs[n] = {0, 1, 2, 3};
    HcclComm comms[n];
    int32_t dup[2] = {1, 1};
    EXPECT(HcclCommInitAll(2, dup, comms), HCCL_E_PARA, "repeats");
    HCHECK(HcclCommInitAll(n, devs, comms));
    std::vector<std::thread> th;
    for (int i = 0; i < n; i++)
        th.emplace_back([&, i] {
            ACHECK(aclrtSetDevice(devs[i]));
            aclrtStream s;
            ACHECK(aclrtCreateStream(&s));
            uint32_t ids[2] = {1, 3};
            HcclComm sub = (HcclComm)0x1;
            bool member = (i == 1 || i == 3);
            if (i == 3) {
                uint32_t unsorted[2] = {3, 1};
                EXPECT(HcclCreateSubCommConfig(&comms[i], 2, unsorted, 5, 1, nullptr, &sub), HCCL_E_PARA, "sorted");
            }
            HCHECK(HcclCreateSubCommConfig(&comms[i], 2, member ? ids : nullptr, member ? 5 : 0xFFFFFFFF,
                                           i == 3 ? 1 : 0, nullptr, &sub));
            if (!member) {
                REQUIRE(sub == nullptr);
            } else {
                uint32_t sz = 0, rk = 9;
                HCHECK(HcclGetRankSize(sub, &sz));
                HCHECK(HcclGetRankId(sub, &rk));
                REQUIRE(sz == 2 && rk == (uint32_t)(i == 3));
                char pname[COMM_NAME_MAX_LENGTH], sname[COMM_NAME_MAX_LENGTH];
                HCHECK(HcclGetCommName(comms[i], pname));
                HCHECK(HcclGetCommName(sub, sname));
                REQUIRE(std::string(sname) == std::string(pname) + "_sub_5");
                int32_t *d = nullptr;
                ACHECK(aclrtMalloc((void **)&d, 64, ACL_MEM_MALLOC_HUGE_FIRST));
                int32_t h[4] = {i, i * 10, 1, 2};
                ACHECK(aclrtMemcpy(d, 16, h, 16, ACL_MEMCPY_HOST_TO_DEVICE));
                HCHECK(HcclAllReduce(d, d, 4, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, sub, s));
                ACHECK(aclrtSynchronizeStream(s));
                ACHECK(aclrtMemcpy(h, 16, d, 16, ACL_MEMCPY_DEVICE_TO_HOST));
                REQUIRE(h[0] == 4 && h[1] == 40 && h[2] == 2 && h[3] == 4);
                ACHECK(aclrtFree(d));
                HCHECK(HcclCommDestroy(sub));
            }
            HCHECK(HcclBarrier(comms[i], s));
            ACHECK(aclrtSynchronizeStream(s));
            ACHECK(aclrtDestroyStream(s));
        });
    for (auto &t : th) t.join();
    for (int i = 0; i < n; i++) HCHECK(HcclCommDestroy(comms[i]));
}

// Driving every rank of HcclCommInitAll from one thread. On CANN a collective only queues
// on its stream, so one thread may call it for each communicator in turn: that works here too
// (the first call stops waiting for its peer after a moment and leaves the meeting to its
// stream task), with the data right. The mistake is to call it for one rank only: the
// stream task waits for ranks nobody will run, with a hint after 10 s, and the synchronize
// fails at HCCL_EXEC_TIMEOUT.
static int single_thread_mistake() {
    ACHECK(aclInit(nullptr));
    int32_t devs[2] = {0, 1};
    HcclComm comms[2];
    HCHECK(HcclCommInitAll(2, devs, comms));
    aclrtStream s[2];
    void *b[2];
    for (int d = 0; d < 2; d++) {
        ACHECK(aclrtSetDevice(d));
        ACHECK(aclrtCreateStream(&s[d]));
        ACHECK(aclrtMalloc(&b[d], 1 << 20, ACL_MEM_MALLOC_HUGE_FIRST));
    }
    // 1. Both ranks from this thread, in turn: tiny, small and large AllReduces.
    const uint64_t counts[3] = {2, 512, 1 << 18};
    for (uint64_t count : counts) {
        std::vector<float> h(count);
        for (int d = 0; d < 2; d++) {
            for (uint64_t i = 0; i < count; i++) h[i] = (float)((d + 1) * (i % 97));
            ACHECK(aclrtSetDevice(d));
            ACHECK(aclrtMemcpy(b[d], count * 4, h.data(), count * 4, ACL_MEMCPY_HOST_TO_DEVICE));
        }
        for (int d = 0; d < 2; d++) {
            ACHECK(aclrtSetDevice(d));
            HCHECK(HcclAllReduce(b[d], b[d], count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comms[d], s[d]));
        }
        for (int d = 0; d < 2; d++) {
            ACHECK(aclrtSetDevice(d));
            ACHECK(aclrtSynchronizeStream(s[d]));
            ACHECK(aclrtMemcpy(h.data(), count * 4, b[d], count * 4, ACL_MEMCPY_DEVICE_TO_HOST));
            for (uint64_t i = 0; i < count; i++) REQUIRE(h[i] == (float)(3 * (i % 97)));
        }
    }
    printf("one thread drove both ranks\n");
    // 2. Only rank 0 calls: the call queues, the synchronize fails with a timeout.
    ACHECK(aclrtSetDevice(0));
    HCHECK(HcclAllReduce(b[0], b[0], 4, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comms[0], s[0]));
    int e = aclrtSynchronizeStream(s[0]);
    const char *m = aclGetRecentErrMsg();
    REQUIRE(e != 0);
    REQUIRE(m && strstr(m, "HCCL_E_TIMEOUT"));
    printf("single-thread mistake reported: %d: %s\n", e, m);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: hccl_init WORKDIR [single-thread]\n");
        return 2;
    }
    if (argc > 2 && !strcmp(argv[2], "single-thread")) return single_thread_mistake();
    g_dir = argv[1];
    test_strings_and_args();
    ACHECK(aclInit(nullptr));
    ACHECK(aclrtSetDevice(0));
    aclrtStream s;
    ACHECK(aclrtCreateStream(&s));
    test_one_rank(s);
    test_rank_tables();
    test_init_all_and_sub();
    ACHECK(aclrtDestroyStream(s));
    ACHECK(aclrtResetDevice(0));
    ACHECK(aclFinalize());
    printf("hccl_init passed (%d checks)\n", g_checks);
    return 0;
}
