"""Every collective and point-to-point call × every dtype × every reduce op, on host arrays,
DLPack arrays, torch CPU tensors and NPU tensors, synchronous and asynchronous, checked
element by element against the result computed here from every rank's (known) input."""

import numpy as np
import pytest

import common
from common import DTYPES, OPS, make, read, reduce_np, values
from conftest import PLACES, need

COUNTS = [1, 7, 1000]


def check(got, want, what):
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, f"{what}: shape {got.shape}, expected {want.shape}"
    bad = np.nonzero(got != want)[0]
    assert bad.size == 0, (
        f"{what}: {bad.size} wrong elements, first at {bad[0]}: got {got[bad[0]]}, "
        f"expected {want[bad[0]]}"
    )


def run(hccl, name, async_, *args, **kw):
    if async_:
        w = getattr(hccl, name + "_async")(*args, **kw)
        hccl.wait(w)
        assert w.is_completed()
    else:
        assert getattr(hccl, name)(*args, **kw) is None


def refused(hccl, dtype, op, call):
    """A reduction CANN does not support raises HcclError HCCL_E_NOT_SUPPORT naming it."""
    with pytest.raises(hccl.HcclError) as e:
        call()
    assert e.value.name == "HCCL_E_NOT_SUPPORT", f"{dtype} {op}: {e.value}"


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_all_reduce(hccl, rank, size, dtype, op, place):
    need(place)
    if not common.reduction_supported(dtype, op):
        x = make(place, values(rank, 7, dtype, op), dtype)
        return refused(hccl, dtype, op, lambda: hccl.all_reduce(x, op=getattr(hccl, op)))
    for n in COUNTS:
        x = make(place, values(rank, n, dtype, op), dtype)
        hccl.all_reduce(x, op=getattr(hccl, op))
        want = reduce_np([values(r, n, dtype, op) for r in range(size)], op)
        check(read(x), want, f"all_reduce {dtype} {op} n={n} on {place}")


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_reduce(hccl, rank, size, dtype, op, place):
    need(place)
    root = size - 1
    n = 7
    mine = values(rank, n, dtype, op)
    x = make(place, mine, dtype)
    if not common.reduction_supported(dtype, op):
        return refused(hccl, dtype, op, lambda: hccl.reduce(x, root=root, op=getattr(hccl, op)))
    hccl.reduce(x, root=root, op=getattr(hccl, op))
    if rank == root:
        want = reduce_np([values(r, n, dtype, op) for r in range(size)], op)
    else:
        want = mine  # left as it was
    check(read(x), want, f"reduce to {root} {dtype} {op} on {place}")


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_reduce_scatter(hccl, rank, size, dtype, op, place):
    need(place)
    k = 5
    g = make(place, values(rank, k * size, dtype, op), dtype)
    out = make(place, np.zeros(k), dtype)
    if not common.reduction_supported(dtype, op):
        return refused(hccl, dtype, op, lambda: hccl.reduce_scatter(out, g, op=getattr(hccl, op)))
    hccl.reduce_scatter(out, g, op=getattr(hccl, op))
    full = reduce_np([values(r, k * size, dtype, op) for r in range(size)], op)
    check(read(out), full[rank * k:(rank + 1) * k], f"reduce_scatter {dtype} {op} on {place}")


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_broadcast(hccl, rank, size, dtype, place):
    need(place)
    for root in sorted({0, size - 1}):
        x = make(place, values(rank, 9, dtype, salt=root), dtype)
        hccl.broadcast(x, root=root)
        check(read(x), values(root, 9, dtype, salt=root), f"broadcast from {root} {dtype} on {place}")


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_all_gather(hccl, rank, size, dtype, place):
    need(place)
    k = 6
    a = make(place, values(rank, k, dtype), dtype)
    b = make(place, np.zeros(k * size), dtype)
    hccl.all_gather(b, a)
    check(read(b), np.concatenate([values(r, k, dtype) for r in range(size)]),
          f"all_gather {dtype} on {place}")


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_all_to_all(hccl, rank, size, dtype, place):
    need(place)
    k = 3
    inp = make(place, values(rank, k * size, dtype), dtype)
    out = make(place, np.zeros(k * size), dtype)
    hccl.all_to_all(out, inp)
    want = np.concatenate([values(src, k * size, dtype)[rank * k:(rank + 1) * k] for src in range(size)])
    check(read(out), want, f"all_to_all {dtype} on {place}")


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_send_recv_ring(hccl, rank, size, dtype, place):
    need(place)
    if size == 1:
        pytest.skip("send/recv needs two ranks")
    nxt, prv = (rank + 1) % size, (rank - 1) % size
    x = make(place, values(rank, 11, dtype), dtype)
    y = make(place, np.zeros(11), dtype)
    # HcclSend completes when the peer receives: even ranks send first, odd ranks receive first.
    if rank % 2 == 0:
        hccl.send(x, dst=nxt)
        hccl.recv(y, src=prv)
    else:
        hccl.recv(y, src=prv)
        hccl.send(x, dst=nxt)
    check(read(y), values(prv, 11, dtype), f"recv from {prv} {dtype} on {place}")


@pytest.mark.parametrize("place", PLACES)
def test_send_recv_async_ring(hccl, rank, size, place):
    need(place)
    if size == 1:
        pytest.skip("send/recv needs two ranks")
    nxt, prv = (rank + 1) % size, (rank - 1) % size
    x = make(place, values(rank, 100, "float32"), "float32")
    y = make(place, np.zeros(100), "float32")
    # The calls of a communicator run in order on one stream, and a send completes when its
    # receive is posted: the same even/odd order as the synchronous ring.
    if rank % 2 == 0:
        ws = hccl.send_async(x, dst=nxt)
        wr = hccl.recv_async(y, src=prv)
    else:
        wr = hccl.recv_async(y, src=prv)
        ws = hccl.send_async(x, dst=nxt)
    hccl.wait([ws, wr])
    check(read(y), values(prv, 100, "float32"), f"async ring on {place}")


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize("name", ["all_reduce", "broadcast", "reduce", "all_gather", "reduce_scatter", "all_to_all"])
def test_async_variants(hccl, rank, size, name, place):
    """Every *_async call returns a Work whose wait() leaves the same result as the plain call."""
    need(place)
    dt = "float32"
    k = 4
    if name in ("all_reduce", "broadcast", "reduce"):
        x = make(place, values(rank, k, dt), dt)
        kw = {"root": 0} if name != "all_reduce" else {}
        run(hccl, name, True, x, **kw)
        if name == "all_reduce" or (name == "reduce" and rank == 0):
            want = reduce_np([values(r, k, dt) for r in range(size)], "Sum")
        elif name == "broadcast":
            want = values(0, k, dt)
        else:
            want = values(rank, k, dt)
        check(read(x), want, f"{name}_async on {place}")
        return
    n_in = k if name == "all_gather" else k * size
    n_out = k * size if name != "reduce_scatter" else k
    a = make(place, values(rank, n_in, dt), dt)
    b = make(place, np.zeros(n_out), dt)
    run(hccl, name, True, b, a)
    if name == "all_gather":
        want = np.concatenate([values(r, k, dt) for r in range(size)])
    elif name == "reduce_scatter":
        want = reduce_np([values(r, n_in, dt) for r in range(size)], "Sum")[rank * k:(rank + 1) * k]
    else:
        want = np.concatenate([values(s, n_in, dt)[rank * k:(rank + 1) * k] for s in range(size)])
    check(read(b), want, f"{name}_async on {place}")


def test_barrier(hccl, size):
    hccl.barrier()
    w = hccl.barrier_async()
    w.wait()
    assert w.is_completed()


def test_zero_elements(hccl, rank, size):
    x = np.zeros(0, dtype=np.float32)
    hccl.all_reduce(x)
    out = np.zeros(0, dtype=np.int32)
    hccl.all_gather(out, np.zeros(0, dtype=np.int32))


def test_big_all_reduce(hccl, rank, size):
    """4 MiB per rank, through the staging path."""
    n = 1 << 20
    x = np.full(n, rank + 1, dtype=np.float32)
    hccl.all_reduce(x)
    assert (x == size * (size + 1) / 2).all()


def test_reduce_op_as_int_and_default(hccl, rank, size):
    x = np.full(3, rank + 1, dtype=np.int32)
    hccl.all_reduce(x, op=2)  # HCCL_REDUCE_MAX
    assert (x == size).all()
    y = np.full(3, 1, dtype=np.int32)
    hccl.all_reduce(y)  # hccl.Sum by default
    assert (y == size).all()


def test_buffer_protocol_objects(hccl, rank, size):
    """bytearray (uint8), array.array and memoryview are host memory too."""
    import array
    b = bytearray([rank + 1] * 4)
    out = bytearray(4 * size)
    hccl.all_gather(out, b)
    assert list(out) == [r + 1 for r in range(size) for _ in range(4)]
    # uint8 is moved but never reduced (CANN's CheckDataType).
    refused(hccl, "uint8", "Sum", lambda: hccl.all_reduce(b))
    a = array.array("d", [float(rank)] * 3)
    hccl.all_reduce(a, op=hccl.Max)
    assert list(a) == [float(size - 1)] * 3
    arr = np.zeros(8, dtype=np.int64)
    m = memoryview(arr)[2:6]
    arr[2:6] = rank
    hccl.all_reduce(m, op=hccl.Min)
    assert list(arr) == [0] * 8


def test_multidimensional_and_views(hccl, rank, size):
    x = np.full((4, 5), rank, dtype=np.float64)
    hccl.all_reduce(x)
    assert (x == sum(range(size))).all()
    # a contiguous slice of rows is fine
    y = np.full((6, 3), rank, dtype=np.int32)
    hccl.all_reduce(y[2:4])
    assert (y[2:4] == sum(range(size))).all() and (y[:2] == rank).all() and (y[4:] == rank).all()


def test_dlpack_deleter_runs(hccl, rank, size):
    """The consumer calls the producer's deleter when the call is done."""
    before = len(common.DELETED)
    x = common.DLArray(np.full(4, 1.0, dtype=np.float32), 2, 32, versioned=False)
    hccl.all_reduce(x)
    assert (x.bits == size).all()
    assert len(common.DELETED) == before + 1
