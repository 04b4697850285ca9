"""Groups: create_group with "rankN" names or ints, called by every rank; members compute in
the group with group ranks; non-members get a Group whose use raises a clear error."""

import numpy as np
import pytest

from common import make, read, values
from conftest import PLACES, need


def halves(size):
    first = list(range((size + 1) // 2))
    return first, [r for r in range(size) if r not in first]


@pytest.mark.parametrize("place", PLACES)
def test_group_of_names(hccl, rank, size, place):
    need(place)
    first, _ = halves(size)
    g = hccl.create_group([f"rank{r}" for r in first])
    assert g.size == len(first) and g.ranks == first
    assert g.is_member == (rank in first)
    x = make(place, np.full(4, rank + 1.0), "float32")
    if rank in first:
        assert g.rank == first.index(rank)
        assert hccl.get_rank(group=g) == g.rank
        assert hccl.get_world_size(group=g) == len(first)
        hccl.all_reduce(x, op=hccl.Sum, group=g)
        assert (read(x) == sum(r + 1 for r in first)).all()
    else:
        with pytest.raises(ValueError, match=r"not a member of group"):
            hccl.all_reduce(x, op=hccl.Sum, group=g)
        with pytest.raises(ValueError, match=r"not a member"):
            g.rank
        with pytest.raises(ValueError, match=r"not a member"):
            hccl.get_rank(group=g)
        assert (read(x) == rank + 1).all(), "a refused call must not touch the tensor"
    hccl.destroy(g)  # every rank may destroy it (nothing to do outside)
    hccl.barrier()


def test_groups_of_ints_unsorted_and_group_ranks(hccl, rank, size):
    members = list(range(size))[::-1]  # given in reverse: the group sorts them
    g = hccl.create_group(members)
    assert g.ranks == sorted(members) and g.rank == rank
    # root / src / dst are ranks of the group
    last = size - 1
    x = np.full(3, float(rank), dtype=np.float64)
    hccl.broadcast(x, root=last, group=g)
    assert (x == last).all()
    assert "hccl.Group" in repr(g)


def test_the_documents_two_groups(hccl, rank, size):
    """The seed document's dp_group (ranks 0-3) and pp_group (ranks 4-5), where they exist."""
    if size < 6:
        pytest.skip("needs 6 ranks")
    dp = hccl.create_group(["rank0", "rank1", "rank2", "rank3"])
    pp = hccl.create_group(["rank4", "rank5"])
    x = np.full(16, rank + 1, dtype=np.float32)
    if dp.is_member:
        hccl.all_reduce(x, op=hccl.Sum, group=dp)
        assert (x == 10).all()
    y = np.zeros(2 * 8, dtype=np.float32)
    local_y = np.full(8, rank, dtype=np.float32)
    if pp.is_member:
        hccl.all_gather(y, local_y, group=pp)
        assert (y[:8] == 4).all() and (y[8:] == 5).all()
    else:
        with pytest.raises(ValueError, match="not a member of group"):
            hccl.all_gather(y, local_y, group=pp)


def test_overlapping_groups_and_async(hccl, rank, size):
    if size < 3:
        pytest.skip("needs 3 ranks")
    a = hccl.create_group([0, 1])
    b = hccl.create_group([1, 2])
    x = np.full(5, rank + 1, dtype=np.int32)
    y = np.full(5, rank + 1, dtype=np.int32)
    ws = []
    if a.is_member:
        ws.append(hccl.all_reduce_async(x, group=a))
    if b.is_member:
        ws.append(hccl.all_reduce_async(y, group=b))
    hccl.wait(ws)
    if rank in (0, 1):
        assert (x == 3).all()
    if rank in (1, 2):
        assert (y == 5).all()


def test_destroyed_group(hccl, rank, size):
    g = hccl.create_group(list(range(size)))
    x = np.ones(2, dtype=np.float32)
    hccl.all_reduce(x, group=g)
    hccl.destroy(g)
    with pytest.raises(ValueError, match="destroyed"):
        hccl.all_reduce(x, group=g)
    hccl.destroy(g)  # destroying twice is harmless


@pytest.mark.parametrize("bad,exc,msg", [
    (["rank0", "rank0"], ValueError, "listed twice"),
    ([], ValueError, "empty"),
    (["node0"], ValueError, r'ranks\[0\]=.node0. is neither'),
    ([-1], ValueError, "but the world has ranks"),
    ("rank0", TypeError, "not a string"),
    (5, TypeError, "list"),
    ([True], ValueError, "neither"),
])
def test_bad_group_lists(hccl, size, bad, exc, msg):
    with pytest.raises(exc, match=msg):
        hccl.create_group(bad)


def test_rank_beyond_world(hccl, size):
    with pytest.raises(ValueError, match=f"ranks\\[0\\] is rank {size}, but the world has ranks 0..{size - 1}"):
        hccl.create_group([f"rank{size}"])


def test_group_roots_are_checked(hccl, rank, size):
    g = hccl.create_group(list(range(size)))
    x = np.ones(2, dtype=np.float32)
    with pytest.raises(ValueError, match=f"root={size} is not a rank of the group"):
        hccl.broadcast(x, root=size, group=g)
    hccl.destroy(g)


def test_values_helper_is_rank_dependent():
    assert not np.array_equal(values(0, 5, "float32"), values(1, 5, "float32"))


def test_two_groups_async_in_opposite_orders(hccl, rank, size):
    """Even ranks start an all_reduce on one group, then one on another; odd ranks the other
    way round; every rank waits for both. Each call only queues (as on CANN), so this runs
    at any size, and the sums are right."""
    if size < 2:
        pytest.skip("needs 2 ranks")
    every = list(range(size))
    a, b = hccl.create_group(every), hccl.create_group(every)
    x = np.full(1 << 18, rank + 1, dtype=np.float32)
    y = np.full(1000, 10 * (rank + 1), dtype=np.float32)
    if rank % 2 == 0:
        ws = [hccl.all_reduce_async(x, group=a), hccl.all_reduce_async(y, group=b)]
    else:
        ws = [hccl.all_reduce_async(y, group=b), hccl.all_reduce_async(x, group=a)]
    hccl.wait(ws)
    s = size * (size + 1) // 2
    assert (x == s).all()
    assert (y == 10 * s).all()
