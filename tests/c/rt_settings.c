/* Process settings and capability queries a framework reads at device init, as CANN's API
 * reference describes them: compile options, CANN attributes, runtime parameters, operator
 * timeouts, saturation mode, stream capture state, versions, and the libruntime/libprofapi
 * symbols libascendcl exports for torch_npu. Also: a tolerated failure does not show up as
 * the last error of a later, unrelated failure.
 * Usage: rt_settings */
#include <stdint.h>
#include "common.h"
#include "acl/acl_op_compiler.h"

/* CANN's libruntime.so / libprofapi.so (no public header). */
extern int32_t rtGetC2cCtrlAddr(uint64_t *addr, uint32_t *len);
extern int32_t rtKernelLaunch(const void *stubFunc, uint32_t blockDim, void *args, uint32_t argsSize,
                              void *smDesc, void *stream);
extern int32_t rtDevBinaryRegister(const void *bin, void **handle);
extern int32_t rtFunctionRegister(void *binHandle, const void *stubFunc, const char *stubName,
                                  const void *devFunc, uint32_t funcMode);
extern int32_t MsprofReportApi(uint32_t nonPersistantFlag, const void *api);
extern int32_t MsprofRegisterCallback(uint32_t moduleId, void *handle);
extern uint64_t MsprofGetHashId(const char *hashInfo, size_t length);
extern uint64_t MsprofSysCycleTime(void);

int main(void) {
    /* --- Compile options: defaults before aclSetCompileopt, the value set after. Work
     *     before aclInit (the op compiler's options are the process's). --- */
    size_t n = aclGetCompileoptSize(ACL_OP_JIT_COMPILE);
    EXPECT(n == strlen("disable") + 1);
    char buf[256];
    CHECK(aclGetCompileopt(ACL_OP_JIT_COMPILE, buf, n));
    EXPECT(strcmp(buf, "disable") == 0);
    n = aclGetCompileoptSize(ACL_PRECISION_MODE);
    CHECK(aclGetCompileopt(ACL_PRECISION_MODE, buf, n));
    EXPECT(strcmp(buf, "allow_fp32_to_fp16") == 0);

    CHECK(aclSetCompileopt(ACL_PRECISION_MODE, "must_keep_origin_dtype"));
    n = aclGetCompileoptSize(ACL_PRECISION_MODE);
    EXPECT(n == strlen("must_keep_origin_dtype") + 1);
    CHECK(aclGetCompileopt(ACL_PRECISION_MODE, buf, n));
    EXPECT(strcmp(buf, "must_keep_origin_dtype") == 0);
    EXPECT_CODE(aclGetCompileopt(ACL_PRECISION_MODE, buf, 4), ACL_ERROR_INVALID_PARAM, "length = 4");
    CHECK(aclSetCompileopt(ACL_OP_JIT_COMPILE, "enable"));
    CHECK(aclGetCompileopt(ACL_OP_JIT_COMPILE, buf, sizeof buf));
    EXPECT(strcmp(buf, "enable") == 0);
    EXPECT_CODE(aclSetCompileopt(ACL_OP_JIT_COMPILE, "sometimes"), ACL_ERROR_INVALID_PARAM,
                "ACL_OP_JIT_COMPILE");
    /* No default and never set: no value. */
    EXPECT(aclGetCompileoptSize(ACL_DEBUG_DIR) == 0);
    EXPECT_CODE(aclGetCompileopt(ACL_DEBUG_DIR, buf, sizeof buf), ACL_ERROR_INVALID_PARAM,
                "ACL_DEBUG_DIR has no value");
    CHECK(aclSetCompileopt(ACL_DEBUG_DIR, "/tmp/dbg"));
    EXPECT(aclGetCompileoptSize(ACL_DEBUG_DIR) == strlen("/tmp/dbg") + 1);
    /* Auto tune was discarded from CANN; bad option and NULL value are bad input. */
    EXPECT_CODE(aclSetCompileopt(ACL_AUTO_TUNE_MODE, "RL"), ACL_ERROR_FEATURE_UNSUPPORTED, "AOE");
    EXPECT_CODE(aclSetCompileopt((aclCompileOpt)99, "x"), ACL_ERROR_INVALID_PARAM, "opt = 99");
    EXPECT_CODE(aclSetCompileopt(ACL_PRECISION_MODE, NULL), ACL_ERROR_INVALID_PARAM, "value");
    EXPECT_CODE(aclGetCompileopt(ACL_PRECISION_MODE, NULL, 8), ACL_ERROR_INVALID_PARAM, "value");
    EXPECT(aclGetCompileoptSize((aclCompileOpt)99) == 0);

    /* --- Runtime parameters of the process: default 0 before any set. --- */
    int64_t pv = -1;
    CHECK(aclrtGetSysParamOpt(ACL_OPT_DETERMINISTIC, &pv));
    EXPECT(pv == 0);
    CHECK(aclrtSetSysParamOpt(ACL_OPT_DETERMINISTIC, 1));
    CHECK(aclrtGetSysParamOpt(ACL_OPT_DETERMINISTIC, &pv));
    EXPECT(pv == 1);
    EXPECT_CODE(aclrtGetSysParamOpt((aclSysParamOpt)7, &pv), ACL_ERROR_INVALID_PARAM, "opt = 7");

    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));

    /* --- CANN attributes on Ascend910B1: INF/NaN and BF16, no JIT compiler. --- */
    int32_t v = -1;
    CHECK(aclGetCannAttribute(ACL_CANN_ATTR_INF_NAN, &v));
    EXPECT(v == 1);
    CHECK(aclGetCannAttribute(ACL_CANN_ATTR_BF16, &v));
    EXPECT(v == 1);
    CHECK(aclGetCannAttribute(ACL_CANN_ATTR_JIT_COMPILE, &v));
    EXPECT(v == 0);
    EXPECT_CODE(aclGetCannAttribute(ACL_CANN_ATTR_UNDEFINED, &v), ACL_ERROR_INVALID_PARAM, "cannAttr");
    EXPECT_CODE(aclGetCannAttribute(ACL_CANN_ATTR_BF16, NULL), ACL_ERROR_INVALID_PARAM, "value");
    const aclCannAttr *list = NULL;
    size_t num = 0;
    CHECK(aclGetCannAttributeList(&list, &num));
    EXPECT(num == 2 && list[0] == ACL_CANN_ATTR_INF_NAN && list[1] == ACL_CANN_ATTR_BF16);

    /* --- Operator execution timeouts. --- */
    uint64_t interval = 0, actual = 0;
    uint32_t ms = 0;
    CHECK(aclrtGetOpTimeOutInterval(&interval));
    EXPECT(interval > 0 && interval < 100000);
    CHECK(aclrtGetOpExecuteTimeout(&ms));
    EXPECT(ms == UINT32_MAX); /* default: never */
    CHECK(aclrtSetOpExecuteTimeOutV2(1500, &actual));
    EXPECT(actual >= 1500 && actual % interval == 0 && actual - 1500 < interval);
    CHECK(aclrtGetOpExecuteTimeout(&ms));
    EXPECT(ms == (uint32_t)((actual + 999) / 1000));
    CHECK(aclrtSetOpExecuteTimeOutV2(0, &actual)); /* 0: the maximum, "never" here */
    EXPECT(actual == UINT64_MAX);
    CHECK(aclrtSetOpExecuteTimeOut(3));
    CHECK(aclrtGetOpExecuteTimeout(&ms));
    EXPECT(ms == 3000);
    CHECK(aclrtSetOpExecuteTimeOut(0));
    EXPECT_CODE(aclrtSetOpExecuteTimeOutV2(10, NULL), ACL_ERROR_INVALID_PARAM, "actualTimeout");
    EXPECT_CODE(aclrtSetOpExecuteTimeOutWithMs(10), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "not supported");

    /* --- Saturation mode: INF/NaN by default on 910B, both modes settable. --- */
    aclrtFloatOverflowMode mode = ACL_RT_OVERFLOW_MODE_UNDEF;
    CHECK(aclrtGetDeviceSatMode(&mode));
    EXPECT(mode == ACL_RT_OVERFLOW_MODE_INFNAN);
    CHECK(aclrtSetDeviceSatMode(ACL_RT_OVERFLOW_MODE_SATURATION));
    CHECK(aclrtGetDeviceSatMode(&mode));
    EXPECT(mode == ACL_RT_OVERFLOW_MODE_SATURATION);
    CHECK(aclrtSetDeviceSatMode(ACL_RT_OVERFLOW_MODE_INFNAN));
    EXPECT_CODE(aclrtSetDeviceSatMode(ACL_RT_OVERFLOW_MODE_UNDEF), ACL_ERROR_RT_PARAM_INVALID, "mode = 2");

    /* --- Stream capture state: a stream nobody captures. --- */
    aclrtStream s = NULL;
    CHECK(aclrtCreateStream(&s));
    aclmdlRICaptureStatus st = ACL_MODEL_RI_CAPTURE_STATUS_INVALIDATED;
    aclmdlRI ri = (aclmdlRI)0x1;
    CHECK(aclmdlRICaptureGetInfo(s, &st, &ri));
    EXPECT(st == ACL_MODEL_RI_CAPTURE_STATUS_NONE && ri == NULL);
    st = ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE;
    CHECK(aclmdlRICaptureGetInfo(s, &st, NULL));
    EXPECT(st == ACL_MODEL_RI_CAPTURE_STATUS_NONE);
    EXPECT_CODE(aclmdlRICaptureGetInfo(s, NULL, NULL), ACL_ERROR_INVALID_PARAM, "both NULL");
    EXPECT_CODE(aclmdlRICaptureGetInfo((aclrtStream)0x12345, &st, NULL), ACL_ERROR_INVALID_PARAM, "stream");

    /* --- Versions. --- */
    aclCANNPackageVersion ver;
    CHECK(aclsysGetCANNVersion(ACL_PKG_NAME_CANN, &ver));
    EXPECT(strcmp(ver.version, "8.5.0") == 0);
    char vs[ACL_PKG_VERSION_MAX_SIZE];
    CHECK(aclsysGetVersionStr("runtime", vs));
    EXPECT(strcmp(vs, "8.5.0") == 0);
    /* The operator packages npu-emu's libopapi stands in for, as torch_npu spells them. */
    CHECK(aclsysGetVersionStr("ops_transformer", vs));
    EXPECT(strcmp(vs, "8.5.0") == 0);
    CHECK(aclsysGetVersionStr("ops_cv", vs));
    EXPECT_CODE(aclsysGetVersionStr("dvpp", vs), ACL_ERROR_INVALID_FILE, "not an installed package");

    /* --- libruntime / libprofapi symbols. --- */
    uint64_t addr = 0;
    uint32_t len = 0;
    EXPECT_CODE(rtGetC2cCtrlAddr(&addr, &len), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, "rtGetC2cCtrlAddr");
    /* The registered-binary path works (tests/tests/ascendc_toolchain.rs runs it); NULL
     * arguments are the runtime's ACL_ERROR_RT_PARAM_INVALID. */
    EXPECT_CODE(rtKernelLaunch(NULL, 1, NULL, 0, NULL, s), ACL_ERROR_RT_PARAM_INVALID, "stubFunc");
    EXPECT_CODE(rtDevBinaryRegister(NULL, NULL), ACL_ERROR_RT_PARAM_INVALID, "bin");
    EXPECT_CODE(rtFunctionRegister(NULL, NULL, "k", NULL, 0), ACL_ERROR_RT_PARAM_INVALID, "binHandle");
    EXPECT(MsprofReportApi(0, NULL) == 6 /* MSPROF_ERROR_UNINITIALIZE */);
    EXPECT(MsprofRegisterCallback(0, NULL) == 6);
    EXPECT(MsprofGetHashId("matmul", 6) == MsprofGetHashId("matmul", 6));
    EXPECT(MsprofGetHashId("matmul", 6) != MsprofGetHashId("add", 3));
    uint64_t t0 = MsprofSysCycleTime(), t1 = MsprofSysCycleTime();
    EXPECT(t0 > 0 && t1 >= t0);

    /* --- A failure the caller tolerated is not reported for a later failure: the last
     *     error is the latest failure's code. --- */
    (void)aclrtGetLastError(ACL_RT_THREAD_LEVEL);
    EXPECT_CODE(aclrtSetOpExecuteTimeOutWithMs(1), ACL_ERROR_RT_FEATURE_NOT_SUPPORT, NULL);
    EXPECT(aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL) == ACL_ERROR_RT_FEATURE_NOT_SUPPORT);
    void *p = NULL;
    EXPECT_CODE(aclrtMalloc(&p, 0, ACL_MEM_MALLOC_HUGE_FIRST), ACL_ERROR_INVALID_PARAM, NULL);
    EXPECT(aclrtPeekAtLastError(ACL_RT_THREAD_LEVEL) == ACL_ERROR_INVALID_PARAM);

    CHECK(aclrtDestroyStream(s));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    /* Settings are the process's: still there after aclFinalize. */
    CHECK(aclrtGetSysParamOpt(ACL_OPT_DETERMINISTIC, &pv));
    EXPECT(pv == 1);
    printf("rt_settings passed\n");
    return 0;
}
