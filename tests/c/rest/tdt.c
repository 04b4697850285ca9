/* Tensor data transfer channels (acl/acl_tdt.h), written from CANN's API reference: data
 * items and datasets, a channel with a capacity whose datasets a second thread receives,
 * device-memory items, the full / empty codes with a timeout, stop, clean, size queries and
 * CANN's argument checks. */
#include <pthread.h>
#include <stdint.h>
#include "common.h"
#include "acl/acl_tdt.h"

#define N 6

static acltdtChannelHandle *rx_chan;
static int received_ok;

/* The receiving thread: its own handle of the same channel; takes N datasets in order. */
static void *receiver(void *arg) {
    (void)arg;
    CHECK(aclrtSetDevice(0));
    for (int k = 0; k < N; k++) {
        acltdtDataset *ds = acltdtCreateDataset();
        EXPECT(ds != NULL);
        CHECK(acltdtReceiveTensor(rx_chan, ds, -1));
        EXPECT(acltdtGetDatasetSize(ds) == 2);
        EXPECT(strcmp(acltdtGetDatasetName(ds), "npu_emu_feed") == 0);
        acltdtDataItem *t = acltdtGetDataItem(ds, 0);
        EXPECT(acltdtGetTensorTypeFromItem(t) == ACL_TENSOR_DATA_TENSOR);
        EXPECT(acltdtGetDataTypeFromItem(t) == ACL_FLOAT);
        EXPECT(acltdtGetDimNumFromItem(t) == 2);
        int64_t dims[4] = {0};
        CHECK(acltdtGetDimsFromItem(t, dims, 4));
        EXPECT(dims[0] == 2 && dims[1] == 3);
        EXPECT(acltdtGetDataSizeFromItem(t) == 6 * sizeof(float));
        const float *v = (const float *)acltdtGetDataAddrFromItem(t);
        for (int i = 0; i < 6; i++) EXPECT(v[i] == (float)(k * 10 + i));
        acltdtDataItem *end = acltdtGetDataItem(ds, 1);
        EXPECT(acltdtGetTensorTypeFromItem(end) ==
               (k == N - 1 ? ACL_TENSOR_DATA_END_OF_SEQUENCE : ACL_TENSOR_DATA_ABNORMAL));
        EXPECT(acltdtGetDataSizeFromItem(end) == 0);
        /* A received dataset owns its items: nothing can be added to it. */
        acltdtDataItem *extra = acltdtCreateDataItem(ACL_TENSOR_DATA_ABNORMAL, NULL, 0,
                                                     ACL_DT_UNDEFINED, NULL, 0);
        EXPECT_CODE(acltdtAddDataItem(ds, extra), ACL_ERROR_FEATURE_UNSUPPORTED, "owns");
        CHECK(acltdtDestroyDataItem(extra));
        CHECK(acltdtDestroyDataset(ds)); /* destroys its items too */
    }
    received_ok = 1;
    return NULL;
}

int main(void) {
    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));

    /* Items and datasets. */
    int64_t dims[2] = {2, 3};
    float data[6];
    acltdtDataItem *bad = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, NULL, 2, ACL_FLOAT, data,
                                               sizeof(data));
    EXPECT(bad == NULL && strstr(aclGetRecentErrMsg(), "dimNum") != NULL);
    bad = acltdtCreateDataItem(ACL_TENSOR_DATA_END_OF_SEQUENCE, dims, 2, ACL_FLOAT, NULL, 0);
    EXPECT(bad == NULL && strstr(aclGetRecentErrMsg(), "dims must be NULL") != NULL);
    EXPECT(acltdtGetTensorTypeFromItem(NULL) == ACL_TENSOR_DATA_UNDEFINED);
    EXPECT(acltdtGetDataTypeFromItem(NULL) == ACL_DT_UNDEFINED);
    EXPECT(acltdtGetDataSizeFromItem(NULL) == 0);
    EXPECT(acltdtGetDatasetSize(NULL) == 0);
    EXPECT_CODE(acltdtDestroyDataItem(NULL), ACL_ERROR_INVALID_PARAM, "dataItem");

    acltdtDataset *ds = acltdtCreateDataset();
    EXPECT(ds != NULL && acltdtGetDatasetSize(ds) == 0);
    acltdtDataItem *t = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, 2, ACL_FLOAT, data,
                                             sizeof(data));
    EXPECT(t != NULL);
    EXPECT(acltdtGetDataAddrFromItem(t) == data); /* the caller's data, not a copy */
    int64_t one[1];
    EXPECT_CODE(acltdtGetDimsFromItem(t, one, 1), ACL_ERROR_INVALID_PARAM, "dimNum");
    size_t slices = 9, slice = 9;
    CHECK(acltdtGetSliceInfoFromItem(t, &slices, &slice));
    EXPECT(slices == 0 && slice == 0);
    acltdtDataItem *mark = acltdtCreateDataItem(ACL_TENSOR_DATA_ABNORMAL, NULL, 0,
                                                ACL_DT_UNDEFINED, NULL, 0);
    CHECK(acltdtAddDataItem(ds, t));
    CHECK(acltdtAddDataItem(ds, mark));
    EXPECT(acltdtGetDatasetSize(ds) == 2);
    EXPECT(acltdtGetDataItem(ds, 1) == mark);
    EXPECT(acltdtGetDataItem(ds, 2) == NULL && strstr(aclGetRecentErrMsg(), "index") != NULL);

    /* Channels: checks, then a channel of capacity 2 between two threads. */
    EXPECT(acltdtCreateChannelWithCapacity(0, NULL, 2) == NULL);
    EXPECT(acltdtCreateChannelWithCapacity(99, "x", 2) == NULL);
    acltdtChannelHandle *tx = acltdtCreateChannelWithCapacity(0, "npu_emu_feed", 2);
    rx_chan = acltdtCreateChannelWithCapacity(0, "npu_emu_feed", 2);
    EXPECT(tx != NULL && rx_chan != NULL);
    size_t size = 99;
    CHECK(acltdtQueryChannelSize(tx, &size));
    EXPECT(size == 0);
    /* Empty: nothing arrives within the timeout. */
    acltdtDataset *in = acltdtCreateDataset();
    EXPECT_CODE(acltdtReceiveTensor(rx_chan, in, 20), ACL_ERROR_RT_QUEUE_EMPTY, "empty");
    EXPECT_CODE(acltdtReceiveTensor(rx_chan, ds, 0), ACL_ERROR_INVALID_PARAM, "empty");
    /* Full: the third dataset does not fit within the timeout. The data is copied at send. */
    for (int i = 0; i < 6; i++) data[i] = -1.0f;
    CHECK(acltdtSendTensor(tx, ds, 0));
    CHECK(acltdtSendTensor(tx, ds, 0));
    EXPECT_CODE(acltdtSendTensor(tx, ds, 30), ACL_ERROR_RT_QUEUE_FULL, "full");
    CHECK(acltdtQueryChannelSize(rx_chan, &size));
    EXPECT(size == 2);
    CHECK(acltdtCleanChannel(tx));
    CHECK(acltdtQueryChannelSize(tx, &size));
    EXPECT(size == 0);

    pthread_t th;
    EXPECT(pthread_create(&th, NULL, receiver, NULL) == 0);
    /* Items in device memory: the data goes through the device. */
    void *dev = NULL;
    CHECK(aclrtMalloc(&dev, sizeof(data), ACL_MEM_MALLOC_HUGE_FIRST));
    for (int k = 0; k < N; k++) {
        for (int i = 0; i < 6; i++) data[i] = (float)(k * 10 + i);
        acltdtDataset *out = acltdtCreateDataset();
        acltdtDataItem *item;
        if (k % 2 == 0) {
            item = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, 2, ACL_FLOAT, data,
                                        sizeof(data));
        } else {
            CHECK(aclrtMemcpy(dev, sizeof(data), data, sizeof(data), ACL_MEMCPY_HOST_TO_DEVICE));
            item = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, 2, ACL_FLOAT, dev,
                                        sizeof(data));
        }
        acltdtDataItem *tail = acltdtCreateDataItem(
            k == N - 1 ? ACL_TENSOR_DATA_END_OF_SEQUENCE : ACL_TENSOR_DATA_ABNORMAL, NULL, 0,
            ACL_DT_UNDEFINED, NULL, 0);
        CHECK(acltdtAddDataItem(out, item));
        CHECK(acltdtAddDataItem(out, tail));
        CHECK(acltdtSendTensor(tx, out, -1)); /* waits while the receiver is behind */
        CHECK(acltdtDestroyDataItem(item));
        CHECK(acltdtDestroyDataItem(tail));
        CHECK(acltdtDestroyDataset(out));
    }
    EXPECT(pthread_join(th, NULL) == 0);
    EXPECT(received_ok);

    /* Stop: a blocked or later receive fails instead of waiting. */
    CHECK(acltdtStopChannel(tx));
    EXPECT_CODE(acltdtReceiveTensor(rx_chan, in, -1), ACL_ERROR_FAILURE, "stopped");
    CHECK(acltdtDestroyChannel(tx));
    CHECK(acltdtDestroyChannel(rx_chan));
    EXPECT_CODE(acltdtDestroyChannel(tx), ACL_ERROR_INVALID_PARAM, "acltdtChannelHandle");

    /* A TDT-mode channel (no capacity) takes any number of datasets. */
    acltdtChannelHandle *c = acltdtCreateChannel(0, "npu_emu_tdt");
    EXPECT(c != NULL);
    for (int i = 0; i < 5; i++) CHECK(acltdtSendTensor(c, ds, 0));
    CHECK(acltdtQueryChannelSize(c, &size));
    EXPECT(size == 5);
    CHECK(acltdtDestroyChannel(c));

    CHECK(aclrtFree(dev));
    CHECK(acltdtDestroyDataset(in));
    CHECK(acltdtDestroyDataItem(t));
    CHECK(acltdtDestroyDataItem(mark));
    CHECK(acltdtDestroyDataset(ds));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    printf("rest_tdt passed\n");
    return 0;
}
