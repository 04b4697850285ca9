//! The algorithms over the in-process transport: ranks are threads, "servers" are groups
//! of them whose buffers are reachable directly, everything else goes through messages.
//! Every operation × several dtypes and reduce ops × in-place, for the cross-server
//! algorithms at many layouts (2×2, 2×4, 3+1, 2+1+3, servers of one rank, interleaved
//! ranks; a segment size of a few bytes so pipelined paths run with small buffers) and the
//! direct ones at 1 to 9 ranks on one server. Each layout is one group of threads running
//! all its cases.

use super::hier::run;
use crate::algo::fabric::Fabric;
use crate::algo::Op;
use crate::errors::HResult;
use crate::fingerprint::{opcode, Dtype, RedOp};
use crate::net::inproc::{InProcNet, World};
use crate::net::Net;
use crate::topo::Topo;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Clone, Default)]
struct Pub {
    send: usize,
    send_len: u64,
    recv: usize,
    recv_len: u64,
    rows: Vec<[u64; 4]>,
}

/// A barrier that panics instead of hanging when a peer thread died.
struct Gate {
    n: u32,
    arrived: AtomicU32,
    gen: AtomicU32,
}

impl Gate {
    fn wait(&self) {
        let g = self.gen.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.n {
            self.arrived.store(0, Ordering::Release);
            self.gen.fetch_add(1, Ordering::AcqRel);
            return;
        }
        let until = Instant::now() + Duration::from_secs(60);
        while self.gen.load(Ordering::Acquire) == g {
            assert!(
                Instant::now() < until,
                "a peer thread never arrived (did it fail?)"
            );
            std::thread::yield_now();
        }
    }
}

struct Shared {
    pubs: Mutex<Vec<Pub>>,
    gate: Gate,
}

struct TestFabric {
    topo: Topo,
    seq: u64,
    sh: Arc<Shared>,
    net: InProcNet,
    seg: u64,
}

impl TestFabric {
    fn buf(&self, p: u32, send: bool, off: u64, len: u64) -> HResult<*mut u8> {
        assert!(
            self.topo.same_server(p, self.topo.rank),
            "rank {} reached into rank {p}'s memory on another server",
            self.topo.rank
        );
        let pb = self.sh.pubs.lock()[p as usize].clone();
        let (base, total) = if send {
            (pb.send, pb.send_len)
        } else {
            (pb.recv, pb.recv_len)
        };
        assert!(
            off + len <= total,
            "rank {}: bytes {off}..{} of rank {p}'s {} buffer of {total}",
            self.topo.rank,
            off + len,
            if send { "send" } else { "receive" }
        );
        if len == 0 {
            return Ok(std::ptr::NonNull::dangling().as_ptr());
        }
        Ok((base + off as usize) as *mut u8)
    }
}

impl Fabric for TestFabric {
    fn topo(&self) -> &Topo {
        &self.topo
    }
    fn seq(&self) -> u64 {
        self.seq
    }
    fn deadline(&self) -> Option<Instant> {
        Some(Instant::now() + Duration::from_secs(30))
    }
    fn send_of(&self, p: u32, off: u64, len: u64) -> HResult<*mut u8> {
        self.buf(p, true, off, len)
    }
    fn recv_of(&self, p: u32, off: u64, len: u64) -> HResult<*mut u8> {
        self.buf(p, false, off, len)
    }
    fn row(&self, p: u32, i: u32) -> [u64; 4] {
        assert!(self.topo.same_server(p, self.topo.rank));
        self.sh.pubs.lock()[p as usize].rows[i as usize]
    }
    fn net(&self) -> &dyn Net {
        &self.net
    }
    fn segment(&self) -> u64 {
        self.seg
    }
}

// ---- values ----

fn put(dt: Dtype, b: &mut [u8], i: usize, v: i64) {
    let sz = dt.size();
    let p = &mut b[i * sz..(i + 1) * sz];
    match dt {
        Dtype::F32 => p.copy_from_slice(&(v as f32).to_le_bytes()),
        Dtype::F64 => p.copy_from_slice(&(v as f64).to_le_bytes()),
        Dtype::F16 => p.copy_from_slice(&half::f16::from_f32(v as f32).to_bits().to_le_bytes()),
        Dtype::BF16 => p.copy_from_slice(&half::bf16::from_f32(v as f32).to_bits().to_le_bytes()),
        _ => p.copy_from_slice(&v.to_le_bytes()[..sz]),
    }
}

fn unsigned(dt: Dtype) -> bool {
    matches!(dt, Dtype::U8 | Dtype::U16 | Dtype::U32 | Dtype::U64)
}

/// Input of rank `r` at logical element `i` for a reduction.
fn val(dt: Dtype, op: RedOp, r: u32, i: u64) -> i64 {
    let u = unsigned(dt);
    let (r, i) = (r as i64, i as i64);
    match op {
        RedOp::Prod => {
            let k = (i * 5 + r * 3) % 11;
            if k == 0 {
                2
            } else if k == 1 && !u {
                -1
            } else {
                1
            }
        }
        RedOp::Max | RedOp::Min => (r * 13 + i * 7) % 11 - if u { 0 } else { 5 },
        RedOp::Sum => (r * 7 + i * 3) % 5 - if u { 0 } else { 2 },
    }
}

fn fold(op: RedOp, a: i64, b: i64) -> i64 {
    match op {
        RedOp::Sum => a + b,
        RedOp::Prod => a * b,
        RedOp::Max => a.max(b),
        RedOp::Min => a.min(b),
    }
}

fn reduced(dt: Dtype, op: RedOp, n: u32, i: u64) -> i64 {
    (1..n).fold(val(dt, op, 0, i), |a, r| fold(op, a, val(dt, op, r, i)))
}

/// Data-movement value of rank `r` at element `i`.
fn mv(r: u32, i: u64) -> i64 {
    ((r as i64) * 1_000_003 + (i as i64) * 7 + 1) % 120
}

const SENTINEL: u8 = 0xa5;

/// One case, as every rank builds it.
struct Case {
    op: Op,
    send: Vec<u8>,
    recv: Vec<u8>,
    /// Recv is the send buffer at this byte offset (in place).
    in_place: Option<u64>,
    /// What recv (or send, for Broadcast) must hold after: (byte offset, bytes).
    expect: Vec<(u64, Vec<u8>)>,
    expect_in_send: bool,
}

fn enc(dt: Dtype, vals: impl Iterator<Item = i64>) -> Vec<u8> {
    let v: Vec<i64> = vals.collect();
    let mut b = vec![0u8; v.len() * dt.size()];
    for (i, x) in v.iter().enumerate() {
        put(dt, &mut b, i, *x);
    }
    b
}

fn base_op(code: u32, dt: Dtype) -> Op {
    let mut op = Op::new(code, String::new());
    op.dt = dt;
    op.dt2 = dt;
    op
}

#[allow(clippy::too_many_arguments)]
fn make_case(
    code: u32,
    dt: Dtype,
    rop: RedOp,
    count: u64,
    root: u32,
    in_place: bool,
    t: &Topo,
) -> Case {
    let (me, n) = (t.rank, t.n);
    let e = dt.size() as u64;
    let mut op = base_op(code, dt);
    op.redop = rop;
    op.count = count;
    op.root = root;
    let cnt = count;
    let sent = |len: u64| vec![SENTINEL; len as usize];
    let mut c = Case {
        op,
        send: Vec::new(),
        recv: Vec::new(),
        in_place: None,
        expect: Vec::new(),
        expect_in_send: false,
    };
    match code {
        opcode::ALLREDUCE | opcode::REDUCE => {
            c.send = enc(dt, (0..cnt).map(|i| val(dt, rop, me, i)));
            c.recv = sent(cnt * e);
            if code == opcode::ALLREDUCE || me == root {
                c.expect
                    .push((0, enc(dt, (0..cnt).map(|i| reduced(dt, rop, n, i)))));
            }
            if in_place {
                c.in_place = Some(0);
            }
        }
        opcode::BROADCAST => {
            c.send = if me == root {
                enc(dt, (0..cnt).map(|i| mv(root, i)))
            } else {
                sent(cnt * e)
            };
            c.expect.push((0, enc(dt, (0..cnt).map(|i| mv(root, i)))));
            c.expect_in_send = true;
        }
        opcode::ALLGATHER => {
            c.send = enc(dt, (0..cnt).map(|i| mv(me, i)));
            c.recv = sent(cnt * e * n as u64);
            c.expect.push((
                0,
                enc(dt, (0..n).flat_map(|q| (0..cnt).map(move |i| mv(q, i)))),
            ));
            if in_place {
                c.in_place = Some(me as u64 * cnt * e);
            }
        }
        opcode::ALLGATHER_V => {
            // Block q has q % 3 + cnt elements at a displacement with a gap before it.
            let counts: Vec<u64> = (0..n as u64).map(|q| q % 3 + cnt).collect();
            let mut displs = Vec::new();
            let mut at = 0;
            for (q, c) in counts.iter().enumerate() {
                at += (q as u64 + me as u64) % 2; // gaps differ per rank
                displs.push(at);
                at += c;
            }
            c.op.count = counts[me as usize];
            c.op.arrays = Some(
                (0..n as usize)
                    .map(|q| [0, 0, counts[q], displs[q]])
                    .collect(),
            );
            c.send = enc(dt, (0..c.op.count).map(|i| mv(me, i)));
            c.recv = sent(at * e);
            for q in 0..n {
                c.expect.push((
                    displs[q as usize] * e,
                    enc(dt, (0..counts[q as usize]).map(|i| mv(q, i))),
                ));
            }
        }
        opcode::REDUCE_SCATTER => {
            c.send = enc(dt, (0..cnt * n as u64).map(|i| val(dt, rop, me, i)));
            c.recv = sent(cnt * e);
            let base = me as u64 * cnt;
            c.expect
                .push((0, enc(dt, (0..cnt).map(|i| reduced(dt, rop, n, base + i)))));
        }
        opcode::REDUCE_SCATTER_V => {
            let counts: Vec<u64> = (0..n as u64).map(|q| (q * 2) % 5 + cnt).collect();
            // This rank's layout of its input: blocks in reverse order, with gaps.
            let mut displs = vec![0u64; n as usize];
            let mut at = 1;
            for q in (0..n as usize).rev() {
                displs[q] = at;
                at += counts[q] + 1;
            }
            let mut send = sent(at * e);
            for q in 0..n as usize {
                for i in 0..counts[q] {
                    put(
                        dt,
                        &mut send,
                        (displs[q] + i) as usize,
                        val(dt, rop, me, q as u64 * 1000 + i),
                    );
                }
            }
            c.send = send;
            c.op.count = counts[me as usize];
            c.op.arrays = Some(
                (0..n as usize)
                    .map(|q| [counts[q], displs[q], 0, 0])
                    .collect(),
            );
            c.recv = sent(c.op.count * e);
            let base = me as u64 * 1000;
            c.expect.push((
                0,
                enc(dt, (0..c.op.count).map(|i| reduced(dt, rop, n, base + i))),
            ));
        }
        opcode::SCATTER => {
            c.send = if me == root {
                enc(dt, (0..cnt * n as u64).map(|i| mv(root, i)))
            } else {
                Vec::new()
            };
            c.recv = sent(cnt * e);
            let base = me as u64 * cnt;
            c.expect
                .push((0, enc(dt, (0..cnt).map(|i| mv(root, base + i)))));
        }
        opcode::ALLTOALL => {
            c.send = enc(dt, (0..cnt * n as u64).map(|i| mv(me, i)));
            c.recv = sent(cnt * e * n as u64);
            c.expect.push((
                0,
                enc(
                    dt,
                    (0..n).flat_map(|p| (0..cnt).map(move |i| mv(p, me as u64 * cnt + i))),
                ),
            ));
        }
        opcode::ALLTOALLV | opcode::ALLTOALLVC => {
            let m = |p: u32, q: u32| ((p * 3 + q) % 5) as u64 + cnt / 2;
            // Sender layout: blocks in order with a one-element gap after each.
            let sdispl = |p: u32, q: u32| (0..q).map(|x| m(p, x) + 1).sum::<u64>();
            let rdispl = |q: u32, p: u32| (0..p).map(|x| m(x, q)).sum::<u64>();
            let send_total: u64 = (0..n).map(|q| m(me, q) + 1).sum();
            let mut send = sent(send_total * e);
            for q in 0..n {
                for i in 0..m(me, q) {
                    put(
                        dt,
                        &mut send,
                        (sdispl(me, q) + i) as usize,
                        mv(me, q as u64 * 100 + i),
                    );
                }
            }
            c.send = send;
            let recv_total: u64 = (0..n).map(|p| m(p, me)).sum();
            c.recv = sent(recv_total * e);
            if code == opcode::ALLTOALLV {
                c.op.arrays = Some(
                    (0..n)
                        .map(|q| [m(me, q), sdispl(me, q), m(q, me), rdispl(me, q)])
                        .collect(),
                );
                for p in 0..n {
                    c.expect.push((
                        rdispl(me, p) * e,
                        enc(dt, (0..m(p, me)).map(|i| mv(p, me as u64 * 100 + i))),
                    ));
                }
            } else {
                // AlltoAllVC: blocks packed (no gaps).
                let mat: Vec<u64> = (0..n).flat_map(|p| (0..n).map(move |q| m(p, q))).collect();
                c.op.matrix = Some(mat);
                let mut send = Vec::new();
                for q in 0..n {
                    send.extend(enc(dt, (0..m(me, q)).map(|i| mv(me, q as u64 * 100 + i))));
                }
                c.send = send;
                for p in 0..n {
                    c.expect.push((
                        rdispl(me, p) * e,
                        enc(dt, (0..m(p, me)).map(|i| mv(p, me as u64 * 100 + i))),
                    ));
                }
            }
        }
        opcode::BARRIER => {}
        _ => unreachable!(),
    }
    c
}

type Runner = fn(&dyn Fabric, &Op) -> HResult<()>;

/// Run every case on the layout `keys` (the server of each rank) with the cross-server
/// algorithms.
fn layout(keys: &[u32], seg: u64) {
    layout_with(keys, seg, run)
}

/// Run every case on the layout `keys` with `runner`.
fn layout_with(keys: &[u32], seg: u64, runner: Runner) {
    let n = keys.len() as u32;
    let world = World::new(n);
    let sh = Arc::new(Shared {
        pubs: Mutex::new(vec![Pub::default(); n as usize]),
        gate: Gate {
            n,
            arrived: AtomicU32::new(0),
            gen: AtomicU32::new(0),
        },
    });
    let keys = keys.to_vec();
    let threads: Vec<_> = (0..n)
        .map(|rank| {
            let (world, sh, keys) = (world.clone(), sh.clone(), keys.clone());
            std::thread::spawn(move || {
                let topo = Topo::from_keys(rank, &keys);
                let mut f = TestFabric {
                    topo: topo.clone(),
                    seq: 0,
                    sh: sh.clone(),
                    net: world.net(rank),
                    seg,
                };
                let mut cases = 0;
                for (code, dts, rops) in plan() {
                    for &dt in dts {
                        for &rop in rops {
                            for count in [1u64, 5, 203] {
                                for in_place in [false, true] {
                                    if in_place
                                        && !matches!(code, opcode::ALLREDUCE | opcode::ALLGATHER)
                                    {
                                        continue;
                                    }
                                    let root = (count as u32 * 3 + 1) % n;
                                    let mut c =
                                        make_case(code, dt, rop, count, root, in_place, &topo);
                                    f.seq += 1;
                                    c.op.seq = f.seq;
                                    one(&f, &mut c, &sh, runner);
                                    cases += 1;
                                }
                            }
                        }
                    }
                }
                cases
            })
        })
        .collect();
    let mut total = 0;
    for t in threads {
        total += t
            .join()
            .expect("a rank's thread failed (see its panic above)");
    }
    assert!(total > 0);
    assert_eq!(world.leftovers(), 0, "messages nobody received");
}

fn plan() -> Vec<(u32, &'static [Dtype], &'static [RedOp])> {
    use Dtype::*;
    const ALL: &[RedOp] = &[RedOp::Sum, RedOp::Prod, RedOp::Max, RedOp::Min];
    const SUM: &[RedOp] = &[RedOp::Sum];
    vec![
        (opcode::ALLREDUCE, &[F32, I8, U64, F16, BF16], ALL),
        (opcode::REDUCE, &[F32, U8], ALL),
        (opcode::REDUCE_SCATTER, &[F32, I16, BF16], ALL),
        (
            opcode::REDUCE_SCATTER_V,
            &[I32, F16],
            &[RedOp::Sum, RedOp::Max],
        ),
        (opcode::BROADCAST, &[I8, F64], SUM),
        (opcode::ALLGATHER, &[U8, F32], SUM),
        (opcode::ALLGATHER_V, &[I64], SUM),
        (opcode::SCATTER, &[U16], SUM),
        (opcode::ALLTOALL, &[F32], SUM),
        (opcode::ALLTOALLV, &[I8], SUM),
        (opcode::ALLTOALLVC, &[U32], SUM),
        (opcode::BARRIER, &[U8], SUM),
    ]
}

fn one(f: &TestFabric, c: &mut Case, sh: &Shared, runner: Runner) {
    let me = f.topo.rank;
    let (send_ptr, send_len) = (c.send.as_mut_ptr() as usize, c.send.len() as u64);
    let (recv_ptr, recv_len) = match c.in_place {
        Some(off) if c.op.code == opcode::ALLGATHER => {
            // In-place AllGather: the input is block `me` of the output.
            let mut out = c.recv.clone();
            out[off as usize..off as usize + c.send.len()].copy_from_slice(&c.send);
            c.recv = out;
            (c.recv.as_mut_ptr() as usize, c.recv.len() as u64)
        }
        Some(_) => (send_ptr, send_len),
        None => (c.recv.as_mut_ptr() as usize, c.recv.len() as u64),
    };
    let (send_ptr, send_len) = match c.in_place {
        Some(off) if c.op.code == opcode::ALLGATHER => (recv_ptr + off as usize, send_len),
        _ => (send_ptr, send_len),
    };
    sh.pubs.lock()[me as usize] = Pub {
        send: send_ptr,
        send_len,
        recv: recv_ptr,
        recv_len,
        rows: c.op.arrays.clone().unwrap_or_default(),
    };
    sh.gate.wait();
    let r = runner(f, &c.op);
    sh.gate.wait();
    if let Err(e) = r {
        panic!(
            "rank {me} {} {:?} {:?} count {}: {}",
            crate::fingerprint::op_name(c.op.code),
            c.op.dt,
            c.op.redop,
            c.op.count,
            e.msg
        );
    }
    // SAFETY: the published buffer is one of this case's vectors, still alive.
    let out = unsafe {
        if c.expect_in_send {
            std::slice::from_raw_parts(send_ptr as *const u8, send_len as usize)
        } else {
            std::slice::from_raw_parts(recv_ptr as *const u8, recv_len as usize)
        }
    };
    for (off, want) in &c.expect {
        let got = &out[*off as usize..*off as usize + want.len()];
        assert!(
            got == want.as_slice(),
            "rank {me} of {:?}: {} {:?} {:?} count {} in_place {:?}: bytes {off}.. are {:?}, expected {:?}",
            f.topo.servers,
            crate::fingerprint::op_name(c.op.code),
            c.op.dt,
            c.op.redop,
            c.op.count,
            c.in_place,
            &got[..got.len().min(32)],
            &want[..want.len().min(32)]
        );
    }
    // Nothing outside the expected ranges was written (gaps keep their sentinel).
    if c.op.code == opcode::ALLGATHER_V || c.op.code == opcode::ALLTOALLV {
        let mut covered = vec![false; out.len()];
        for (off, want) in &c.expect {
            for x in covered.iter_mut().skip(*off as usize).take(want.len()) {
                *x = true;
            }
        }
        for (i, b) in out.iter().enumerate() {
            assert!(
                covered[i] || *b == SENTINEL,
                "rank {me}: byte {i} outside every block was written"
            );
        }
    }
    sh.gate.wait();
}

#[test]
fn two_servers_of_two() {
    layout(&[0, 0, 1, 1], 16);
}

#[test]
fn two_servers_of_four() {
    layout(&[0, 0, 0, 0, 1, 1, 1, 1], 64);
}

#[test]
fn three_plus_one() {
    layout(&[0, 0, 0, 1], 8);
}

#[test]
fn uneven_three_servers() {
    layout(&[0, 0, 1, 2, 2, 2], 24);
}

#[test]
fn one_rank_per_server() {
    layout(&[0, 1], 4);
    layout(&[0, 1, 2], 12);
    layout(&[0, 1, 2, 3, 4, 5, 6], 1 << 20);
}

#[test]
fn interleaved_ranks() {
    layout(&[0, 1, 0, 1, 2], 32);
}

#[test]
fn one_server() {
    // The cross-server algorithms are also correct on one server (nothing goes over the
    // network then); the selector uses the direct ones there.
    layout(&[0, 0, 0], 16);
}

#[test]
fn a_dead_peer_fails_the_operation() {
    let world = World::new(2);
    let sh = Arc::new(Shared {
        pubs: Mutex::new(vec![Pub::default(); 2]),
        gate: Gate {
            n: 1,
            arrived: AtomicU32::new(0),
            gen: AtomicU32::new(0),
        },
    });
    let topo = Topo::from_keys(0, &[0, 1]);
    let f = TestFabric {
        topo: topo.clone(),
        seq: 1,
        sh: sh.clone(),
        net: world.net(0),
        seg: 1 << 20,
    };
    let mut c = make_case(
        opcode::ALLREDUCE,
        Dtype::F32,
        RedOp::Sum,
        100,
        0,
        false,
        &topo,
    );
    c.op.seq = 1;
    sh.pubs.lock()[0] = Pub {
        send: c.send.as_mut_ptr() as usize,
        send_len: c.send.len() as u64,
        recv: c.recv.as_mut_ptr() as usize,
        recv_len: c.recv.len() as u64,
        rows: Vec::new(),
    };
    let w2 = world.clone();
    let k = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        w2.kill(1, "its process was killed");
    });
    let e = run(&f, &c.op).unwrap_err();
    k.join().unwrap();
    assert!(
        e.msg.contains("rank 1 is gone: its process was killed"),
        "{}",
        e.msg
    );
}

#[test]
fn direct_algorithms_on_one_server_1_to_9_ranks() {
    for n in [1usize, 2, 3, 4, 5, 8, 9] {
        layout_with(&vec![0; n], 1 << 20, crate::algo::direct);
    }
}
