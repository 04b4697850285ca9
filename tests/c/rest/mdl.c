/* The offline-model API of acl_mdl.h (CANN 8.1 set), written from the API reference: the data
 * structures work; loading a model names the file and says npu-emu cannot run it; model ids
 * and bundle ids are never valid. */
#include "common.h"
#include "acl/acl_mdl.h"

static void datasets(void) {
    aclmdlDataset *ds = aclmdlCreateDataset();
    EXPECT(ds != NULL);
    EXPECT(aclmdlGetDatasetNumBuffers(ds) == 0);
    EXPECT(aclmdlGetDatasetNumBuffers(NULL) == 0);
    float host[8];
    aclDataBuffer *b0 = aclCreateDataBuffer(host, sizeof(host));
    aclDataBuffer *b1 = aclCreateDataBuffer(NULL, 0);
    CHECK(aclmdlAddDatasetBuffer(ds, b0));
    CHECK(aclmdlAddDatasetBuffer(ds, b1));
    EXPECT_CODE(aclmdlAddDatasetBuffer(ds, NULL), ACL_ERROR_INVALID_PARAM, "dataBuffer");
    EXPECT_CODE(aclmdlAddDatasetBuffer(NULL, b0), ACL_ERROR_INVALID_PARAM, "dataset");
    EXPECT(aclmdlGetDatasetNumBuffers(ds) == 2);
    EXPECT(aclmdlGetDatasetBuffer(ds, 0) == b0);
    EXPECT(aclmdlGetDatasetBuffer(ds, 1) == b1);
    EXPECT(aclmdlGetDatasetBuffer(ds, 2) == NULL);
    EXPECT(aclGetDataBufferAddr(aclmdlGetDatasetBuffer(ds, 0)) == host);

    /* Tensor descriptions are copied into the dataset. */
    EXPECT(aclmdlGetDatasetTensorDesc(ds, 0) == NULL);
    int64_t dims[2] = {2, 4};
    aclTensorDesc *td = aclCreateTensorDesc(ACL_FLOAT, 2, dims, ACL_FORMAT_ND);
    CHECK(aclmdlSetDatasetTensorDesc(ds, td, 0));
    aclDestroyTensorDesc(td); /* the dataset keeps its own copy */
    aclTensorDesc *got = aclmdlGetDatasetTensorDesc(ds, 0);
    EXPECT(got != NULL && got != td);
    EXPECT(aclGetTensorDescType(got) == ACL_FLOAT);
    EXPECT(aclGetTensorDescNumDims(got) == 2);
    EXPECT(aclGetTensorDescSize(got) == 32);
    EXPECT_CODE(aclmdlSetDatasetTensorDesc(ds, td, 5), ACL_ERROR_INVALID_PARAM, "index");
    CHECK(aclmdlSetDatasetTensorDesc(ds, NULL, 0)); /* removes it */
    EXPECT(aclmdlGetDatasetTensorDesc(ds, 0) == NULL);
    CHECK(aclmdlDestroyDataset(ds));
    EXPECT_CODE(aclmdlDestroyDataset(ds), ACL_ERROR_INVALID_PARAM, "aclmdlDataset");
    EXPECT_CODE(aclmdlDestroyDataset(NULL), ACL_ERROR_INVALID_PARAM, NULL);
    /* The data buffers are the program's. */
    CHECK(aclDestroyDataBuffer(b0));
    CHECK(aclDestroyDataBuffer(b1));
}

static void loading(void) {
    uint32_t id = 77;
    EXPECT_CODE(aclmdlLoadFromFile("does/not/exist.om", &id), 145002, "does/not/exist.om");
    FILE *f = fopen("model.om", "wb");
    fputs("not really a model", f);
    fclose(f);
    EXPECT_CODE(aclmdlLoadFromFile("model.om", &id), ACL_ERROR_API_NOT_SUPPORT, "model.om");
    const char *m = NULL;
    aclmdlLoadFromFile("model.om", &id);
    m = aclGetRecentErrMsg();
    EXPECT(m != NULL && strstr(m, "not supported by npu-emu") != NULL);
    EXPECT(id == 77); /* untouched */
    EXPECT_CODE(aclmdlLoadFromFile(NULL, &id), ACL_ERROR_INVALID_PARAM, "modelPath");
    EXPECT_CODE(aclmdlLoadFromFile("model.om", NULL), ACL_ERROR_INVALID_PARAM, "modelId");
    char image[64] = {0};
    EXPECT_CODE(aclmdlLoadFromMem(image, sizeof(image), &id), ACL_ERROR_API_NOT_SUPPORT, "64 bytes");
    EXPECT_CODE(aclmdlLoadFromMem(image, 0, &id), ACL_ERROR_INVALID_PARAM, "modelSize");
    EXPECT_CODE(aclmdlLoadFromFileWithMem("model.om", &id, NULL, 0, NULL, 0), ACL_ERROR_API_NOT_SUPPORT,
                "model.om");
    size_t work = 0, weight = 0;
    EXPECT_CODE(aclmdlQuerySize("model.om", &work, &weight), ACL_ERROR_API_NOT_SUPPORT, "model.om");
    uint32_t bundle = 0;
    EXPECT_CODE(aclmdlBundleLoadFromFile("model.om", &bundle), ACL_ERROR_API_NOT_SUPPORT, "model.om");
    size_t n = 0;
    EXPECT_CODE(aclmdlBundleGetModelNum(3, &n), ACL_ERROR_INVALID_BUNDLE_MODEL_ID, "bundle id 3");

    /* Model ids are never valid. */
    aclmdlDataset *in = aclmdlCreateDataset(), *out = aclmdlCreateDataset();
    EXPECT_CODE(aclmdlExecute(5, in, out), 145003, "model id 5");
    EXPECT_CODE(aclmdlUnload(5), 145003, "model id 5");
    aclmdlDesc *desc = aclmdlCreateDesc();
    EXPECT_CODE(aclmdlGetDesc(desc, 5), 145003, NULL);
    EXPECT(aclmdlGetNumInputs(desc) == 0 && aclmdlGetNumOutputs(desc) == 0);
    EXPECT(aclmdlGetInputSizeByIndex(desc, 0) == 0);
    EXPECT(aclmdlGetInputFormat(desc, 0) == ACL_FORMAT_UNDEFINED);
    EXPECT(aclmdlGetOutputDataType(desc, 0) == ACL_DT_UNDEFINED);
    EXPECT(aclmdlGetInputNameByIndex(desc, 0) == NULL);
    aclmdlIODims dims;
    EXPECT_CODE(aclmdlGetInputDims(desc, 0, &dims), ACL_ERROR_INVALID_PARAM, "index");
    aclmdlBatch batch;
    batch.batchCount = 99;
    CHECK(aclmdlGetDynamicBatch(desc, &batch));
    EXPECT(batch.batchCount == 0);
    size_t idx = 0;
    EXPECT_CODE(aclmdlGetInputIndexByName(desc, "x", &idx), ACL_ERROR_INVALID_PARAM, "\"x\"");
    EXPECT_CODE(aclmdlGetDescFromFile(desc, "model.om"), ACL_ERROR_API_NOT_SUPPORT, "model.om");
    CHECK(aclmdlDestroyDesc(desc));
    EXPECT_CODE(aclmdlDestroyDesc(desc), ACL_ERROR_INVALID_PARAM, "aclmdlDesc");
    CHECK(aclmdlDestroyDataset(in));
    CHECK(aclmdlDestroyDataset(out));
}

static void configs(void) {
    aclmdlConfigHandle *h = aclmdlCreateConfigHandle();
    EXPECT(h != NULL);
    uint32_t id = 0;
    EXPECT_CODE(aclmdlLoadWithConfig(h, &id), ACL_ERROR_INVALID_PARAM, "ACL_MDL_LOAD_TYPE_SIZET");
    size_t type = ACL_MDL_LOAD_FROM_FILE;
    CHECK(aclmdlSetConfigOpt(h, ACL_MDL_LOAD_TYPE_SIZET, &type, sizeof(type)));
    EXPECT_CODE(aclmdlSetConfigOpt(h, ACL_MDL_LOAD_TYPE_SIZET, &type, 4), ACL_ERROR_INVALID_PARAM, "valueSize");
    size_t bad = 9;
    EXPECT_CODE(aclmdlSetConfigOpt(h, ACL_MDL_LOAD_TYPE_SIZET, &bad, sizeof(bad)), ACL_ERROR_INVALID_PARAM,
                "load type");
    EXPECT_CODE(aclmdlLoadWithConfig(h, &id), ACL_ERROR_INVALID_PARAM, "ACL_MDL_PATH_PTR");
    const char *path = "model.om";
    CHECK(aclmdlSetConfigOpt(h, ACL_MDL_PATH_PTR, &path, sizeof(path)));
    int32_t prio = 9;
    EXPECT_CODE(aclmdlSetConfigOpt(h, ACL_MDL_PRIORITY_INT32, &prio, sizeof(prio)), ACL_ERROR_INVALID_PARAM,
                "priority");
    EXPECT_CODE(aclmdlLoadWithConfig(h, &id), ACL_ERROR_API_NOT_SUPPORT, "model.om");
    CHECK(aclmdlDestroyConfigHandle(h));

    aclmdlExecConfigHandle *e = aclmdlCreateExecConfigHandle();
    int32_t t = 1000;
    CHECK(aclmdlSetExecConfigOpt(e, ACL_MDL_STREAM_SYNC_TIMEOUT, &t, sizeof(t)));
    t = -2;
    EXPECT_CODE(aclmdlSetExecConfigOpt(e, ACL_MDL_EVENT_SYNC_TIMEOUT, &t, sizeof(t)), ACL_ERROR_INVALID_PARAM,
                "timeout");
    EXPECT_CODE(aclmdlSetExecConfigOpt(e, ACL_MDL_WORK_ADDR_PTR, &t, sizeof(t)), ACL_ERROR_INVALID_PARAM, "attr");
    CHECK(aclmdlDestroyExecConfigHandle(e));
}

static void aipp(void) {
    EXPECT(aclmdlCreateAIPP(0) == NULL);
    aclmdlAIPP *a = aclmdlCreateAIPP(2);
    EXPECT(a != NULL);
    size_t sz = 0;
    CHECK(aclmdlGetAippDataSize(2, &sz));
    EXPECT(sz == 64 + 2 * 96);
    CHECK(aclmdlSetAIPPInputFormat(a, ACL_YUV420SP_U8));
    EXPECT_CODE(aclmdlSetAIPPInputFormat(a, (aclAippInputFormat)99), ACL_ERROR_INVALID_PARAM, "inputFormat");
    CHECK(aclmdlSetAIPPSrcImageSize(a, 224, 224));
    EXPECT_CODE(aclmdlSetAIPPSrcImageSize(a, 1, 224), ACL_ERROR_INVALID_PARAM, "srcImageSizeW");
    CHECK(aclmdlSetAIPPCscParams(a, 1, 256, 0, 359, 256, -88, -183, 256, 454, 0, 0, 0, 0, 0, 128, 128));
    EXPECT_CODE(aclmdlSetAIPPCscParams(a, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), ACL_ERROR_INVALID_PARAM,
                "cscSwitch");
    CHECK(aclmdlSetAIPPCropParams(a, 1, 0, 0, 200, 200, 1));
    EXPECT_CODE(aclmdlSetAIPPCropParams(a, 1, 0, 0, 200, 200, 2), ACL_ERROR_INVALID_PARAM, "batchIndex");
    CHECK(aclmdlSetAIPPPaddingParams(a, 1, 1, 2, 3, 4, 0));
    EXPECT_CODE(aclmdlSetAIPPPaddingParams(a, 1, 33, 0, 0, 0, 0), ACL_ERROR_INVALID_PARAM, "paddingSizeTop");
    CHECK(aclmdlSetAIPPDtcPixelMean(a, 104, 117, 123, 0, 0));
    CHECK(aclmdlSetAIPPDtcPixelMin(a, 0.0f, 0.0f, 0.0f, 0.0f, 1));
    CHECK(aclmdlSetAIPPPixelVarReci(a, 1.0f, 1.0f, 1.0f, 1.0f, 1));
    EXPECT_CODE(aclmdlSetAIPPPixelVarReci(a, 70000.0f, 1, 1, 1, 0), ACL_ERROR_INVALID_PARAM, "dtcPixelVarReciChn0");
    CHECK(aclmdlSetAIPPRbuvSwapSwitch(a, 1));
    CHECK(aclmdlSetAIPPAxSwapSwitch(a, 0));
    CHECK(aclmdlSetAIPPScfParams(a, 0, 0, 0, 0, 0, 0)); /* switch off: sizes not checked */
    EXPECT_CODE(aclmdlSetAIPPScfParams(a, 1, 8, 8, 8, 8, 0), ACL_ERROR_INVALID_PARAM, "scfInputSizeW");
    aclmdlDataset *ds = aclmdlCreateDataset();
    EXPECT_CODE(aclmdlSetInputAIPP(1, ds, 0, a), 145003, "model id 1");
    CHECK(aclmdlDestroyDataset(ds));
    CHECK(aclmdlDestroyAIPP(a));
    EXPECT_CODE(aclmdlDestroyAIPP(a), ACL_ERROR_INVALID_PARAM, "aclmdlAIPP");
}

int main(void) {
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    datasets();
    loading();
    configs();
    aipp();
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    printf("rest_mdl passed\n");
    return 0;
}
