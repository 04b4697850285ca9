/* One kernel per misuse the hardware hangs, corrupts or traps on: each must end the block with a
 * kernel fault naming the API and the values (run by icpu_faults.cpp). */
#include "kernel_operator.h"

using namespace AscendC;

constexpr uint32_t N = 1024; /* halves in x and y */

enum FaultCase : uint32_t {
    DEQUE_EMPTY,
    ENQUE_DEPTH,
    ALLOC_EXHAUSTED,
    FREE_FOREIGN,
    DOUBLE_FREE,
    FREE_ENQUEUED,
    UB_OVERFLOW,
    COPY_LEN_UNALIGNED,
    COPY_UB_MISALIGNED,
    COPY_BEYOND_LOCAL,
    VEC_COUNT_BEYOND,
    VEC_UB_MISALIGNED,
    GM_READ_OOB,
    GM_WRITE_OOB,
    GM_SETVALUE_OOB,
    GM_GETVALUE_WILD,
    PAD_READ_OOB,
    LOCAL_INDEX,
    SECOND_PIPE,
    BLOCK5_OOB,
    FIFO_ORDER, /* not a fault: checks first-in first-out */
    ENQUE_FOREIGN,
    TBUF_GET_BEYOND,
    LEVEL0_MASK_RANGE,
    LEVEL0_REPEAT_BEYOND,
    VEC_PARTIAL_OVERLAP,
    CAST_IN_PLACE_WIDENING,
    VIEW_STANDS_FOR_BUFFER, /* not a fault: EnQue / FreeTensor of a view act on its buffer */
    ASSERT_FALSE,           /* CANN's ASSERT macro of the older samples */
};

extern "C" __global__ __aicore__ void faults(GM_ADDR x, GM_ADDR y, uint32_t which)
{
    TPipe pipe;
    GlobalTensor<half> xGm, yGm;
    xGm.SetGlobalBuffer((__gm__ half *)x, N);
    yGm.SetGlobalBuffer((__gm__ half *)y, N);
    TQue<TPosition::VECIN, 1> q1;
    TQue<TPosition::VECOUT, 2> q2;
    TBuf<TPosition::VECCALC> tb;
    switch (which) {
    case DEQUE_EMPTY: {
        pipe.InitBuffer(q1, 2, 256);
        LocalTensor<half> a = q1.DeQue<half>();
        (void)a;
        break;
    }
    case ENQUE_DEPTH: {
        pipe.InitBuffer(q1, 2, 256);
        LocalTensor<half> a = q1.AllocTensor<half>();
        LocalTensor<half> b = q1.AllocTensor<half>();
        q1.EnQue(a);
        q1.EnQue(b);
        break;
    }
    case ALLOC_EXHAUSTED: {
        pipe.InitBuffer(q1, 2, 256);
        LocalTensor<half> a = q1.AllocTensor<half>();
        LocalTensor<half> b = q1.AllocTensor<half>();
        LocalTensor<half> c = q1.AllocTensor<half>();
        (void)a, (void)b, (void)c;
        break;
    }
    case FREE_FOREIGN: {
        pipe.InitBuffer(q1, 2, 256);
        pipe.InitBuffer(q2, 2, 256);
        LocalTensor<half> a = q2.AllocTensor<half>();
        q1.FreeTensor(a);
        break;
    }
    case DOUBLE_FREE: {
        pipe.InitBuffer(q1, 2, 256);
        LocalTensor<half> a = q1.AllocTensor<half>();
        q1.FreeTensor(a);
        q1.FreeTensor(a);
        break;
    }
    case FREE_ENQUEUED: {
        pipe.InitBuffer(q1, 2, 256);
        LocalTensor<half> a = q1.AllocTensor<half>();
        q1.EnQue(a);
        q1.FreeTensor(a);
        break;
    }
    case UB_OVERFLOW: {
        pipe.InitBuffer(q1, 2, 64 * 1024);
        pipe.InitBuffer(q2, 2, 32 * 1024 + 1); /* 2 x 32800 on top of 131072 > 196608 */
        break;
    }
    case COPY_LEN_UNALIGNED: {
        pipe.InitBuffer(q1, 1, 256);
        LocalTensor<half> a = q1.AllocTensor<half>();
        DataCopy(a, xGm, 100);
        break;
    }
    case COPY_UB_MISALIGNED: {
        pipe.InitBuffer(q1, 1, 256);
        LocalTensor<half> a = q1.AllocTensor<half>();
        DataCopy(a[3], xGm, 16);
        break;
    }
    case COPY_BEYOND_LOCAL: {
        pipe.InitBuffer(q1, 1, 256);
        LocalTensor<half> a = q1.AllocTensor<half>();
        DataCopy(a, xGm, 256);
        break;
    }
    case VEC_COUNT_BEYOND: {
        pipe.InitBuffer(tb, 256);
        LocalTensor<half> a = tb.Get<half>();
        Add(a, a, a, 200);
        break;
    }
    case VEC_UB_MISALIGNED: {
        pipe.InitBuffer(tb, 256);
        LocalTensor<half> a = tb.Get<half>();
        Muls(a[8], a, (half)2.0, 16);
        break;
    }
    case GM_READ_OOB: {
        pipe.InitBuffer(q1, 1, 512);
        LocalTensor<half> a = q1.AllocTensor<half>();
        DataCopy(a, xGm[N - 128], 256); /* the last 128 halves, then 256 bytes past x */
        break;
    }
    case GM_WRITE_OOB: {
        pipe.InitBuffer(q1, 1, 512);
        LocalTensor<half> a = q1.AllocTensor<half>();
        DataCopy(yGm[N], a, 16);
        break;
    }
    case GM_SETVALUE_OOB:
        yGm.SetValue(N, (half)1.0);
        break;
    case GM_GETVALUE_WILD: {
        GlobalTensor<uint32_t> wild;
        wild.SetGlobalBuffer((__gm__ uint32_t *)0x1000, 16);
        (void)wild.GetValue(0);
        break;
    }
    case PAD_READ_OOB: {
        pipe.InitBuffer(q1, 1, 512);
        LocalTensor<half> a = q1.AllocTensor<half>();
        DataCopyExtParams p{1, 20, 0, 0, 0};
        DataCopyPadExtParams<half> pad{false, 0, 0, 0};
        DataCopyPad(a, xGm[N - 5], p, pad); /* 10 halves from 5 before the end */
        break;
    }
    case LOCAL_INDEX: {
        pipe.InitBuffer(tb, 256);
        LocalTensor<half> a = tb.Get<half>();
        (void)a.GetValue(128);
        break;
    }
    case SECOND_PIPE: {
        TPipe other;
        break;
    }
    case BLOCK5_OOB:
        if (GetBlockIdx() == 5) {
            (void)xGm.GetValue(N + 2);
        }
        break;
    case FIFO_ORDER: {
        pipe.InitBuffer(q2, 2, 64);
        LocalTensor<half> a = q2.AllocTensor<half>();
        LocalTensor<half> b = q2.AllocTensor<half>();
        a.SetValue(0, (half)1.0);
        b.SetValue(0, (half)2.0);
        q2.EnQue(a);
        q2.EnQue(b);
        if (!q2.HasTensorInQue() || q2.GetTensorCountInQue() != 2 || q2.VacantInQue() || q2.HasIdleBuffer()) {
            yGm.SetValue(2, (half)-1.0);
        }
        LocalTensor<half> first = q2.DeQue<half>();
        LocalTensor<half> second = q2.DeQue<half>();
        yGm.SetValue(0, first.GetValue(0));
        yGm.SetValue(1, second.GetValue(0));
        q2.FreeTensor(first);
        q2.FreeTensor(second);
        if (q2.HasTensorInQue() || !q2.VacantInQue() || !q2.HasIdleBuffer()) {
            yGm.SetValue(3, (half)-1.0);
        }
        break;
    }
    case ENQUE_FOREIGN: {
        pipe.InitBuffer(q1, 1, 256);
        pipe.InitBuffer(tb, 256);
        LocalTensor<half> t = tb.Get<half>();
        q1.EnQue(t);
        break;
    }
    case TBUF_GET_BEYOND: {
        pipe.InitBuffer(tb, 256);
        LocalTensor<float> t = tb.Get<float>(65);
        (void)t;
        break;
    }
    case LEVEL0_MASK_RANGE: {
        pipe.InitBuffer(tb, 1024);
        LocalTensor<half> t = tb.Get<half>();
        Add(t, t, t, 200, 1, {1, 1, 1, 8, 8, 8});
        break;
    }
    case LEVEL0_REPEAT_BEYOND: {
        pipe.InitBuffer(tb, 1024);
        LocalTensor<float> t = tb.Get<float>();
        Exp(t, t, 64, 5, {1, 1, 8, 8});
        break;
    }
    case VEC_PARTIAL_OVERLAP: {
        pipe.InitBuffer(tb, 1024);
        LocalTensor<half> t = tb.Get<half>();
        Add(t[16], t, t, 64);
        break;
    }
    case CAST_IN_PLACE_WIDENING: {
        pipe.InitBuffer(tb, 1024);
        LocalTensor<half> t = tb.Get<half>();
        Cast(t.ReinterpretCast<float>(), t, RoundMode::CAST_NONE, 64);
        break;
    }
    case VIEW_STANDS_FOR_BUFFER: {
        pipe.InitBuffer(q2, 2, 64);
        LocalTensor<half> a = q2.AllocTensor<half>();
        a.SetValue(0, (half)5.0);
        q2.EnQue(a[16]);
        LocalTensor<half> b = q2.DeQue<half>();
        yGm.SetValue(0, b.GetValue(0));
        yGm.SetValue(1, (half)(float)b.GetSize());
        LocalTensor<half> view = b[8];
        q2.FreeTensor(view);
        LocalTensor<half> c = q2.AllocTensor<half>();
        LocalTensor<half> d = q2.AllocTensor<half>();
        (void)c, (void)d;
        yGm.SetValue(2, (half)1.0);
        break;
    }
    case ASSERT_FALSE: {
        uint32_t tiles = 0;
        DEBUG_CODE(tiles = 4);
        ASSERT(tiles == 4 && "DEBUG_CODE kept");
        ASSERT(tiles == 0 && "tile num can not be zero!");
        break;
    }
    default:
        break;
    }
}
