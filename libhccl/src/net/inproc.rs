//! Ranks as threads of one process: a [`Net`] for unit tests of the algorithms (gloo's
//! habit). Messages are copied through a shared table; a rank can be marked dead to test
//! how its peers fail.

use super::{Net, Recv, RecvSlot, Tag};
use crate::errors::{HResult, HcclError, HCCL_E_REMOTE, HCCL_E_TIMEOUT};
use npu_emu::wait::{wait_until, Policy, WaitError, Word};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

type Key = (u32, u32, Tag);

#[derive(Default)]
struct State {
    msgs: HashMap<Key, Vec<u8>>,
    posted: HashMap<Key, Arc<RecvSlot>>,
    /// Ranks that died, with why.
    dead: HashMap<u32, String>,
}

/// The shared side of an in-process world of `n` ranks.
pub struct World {
    n: u32,
    st: Mutex<State>,
    word: Word,
    /// Messages and bytes sent (for tests that check what an algorithm moves).
    pub messages: AtomicU64,
    pub bytes: AtomicU64,
}

impl World {
    pub fn new(n: u32) -> Arc<World> {
        Arc::new(World {
            n,
            st: Mutex::new(State::default()),
            word: Word {
                value: AtomicU32::new(0),
                sleepers: AtomicU32::new(0),
            },
            messages: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
        })
    }

    /// Rank `rank`'s view.
    pub fn net(self: &Arc<World>, rank: u32) -> InProcNet {
        InProcNet {
            w: self.clone(),
            rank,
        }
    }

    /// Mark `rank` dead: receives from it fail, as a closed connection would.
    pub fn kill(&self, rank: u32, why: &str) {
        let mut st = self.st.lock();
        st.dead.insert(rank, why.to_string());
        let posted: Vec<(Key, Arc<RecvSlot>)> = st
            .posted
            .iter()
            .filter(|(k, _)| k.0 == rank)
            .map(|(k, s)| (*k, s.clone()))
            .collect();
        for (k, s) in posted {
            st.posted.remove(&k);
            s.fail(HcclError::new(
                HCCL_E_REMOTE,
                format!("rank {rank} is gone: {why}"),
            ));
        }
        drop(st);
        self.word.bump_wake();
    }

    /// Messages sent that nobody received (a finished algorithm leaves none).
    pub fn leftovers(&self) -> usize {
        self.st.lock().msgs.len()
    }
}

/// One rank of a [`World`].
pub struct InProcNet {
    w: Arc<World>,
    rank: u32,
}

impl Net for InProcNet {
    fn rank(&self) -> u32 {
        self.rank
    }

    fn size(&self) -> u32 {
        self.w.n
    }

    unsafe fn send(
        &self,
        peer: u32,
        tag: Tag,
        buf: *const u8,
        len: usize,
        _deadline: Option<Instant>,
    ) -> HResult<()> {
        let data: &[u8] = if len == 0 {
            &[]
        } else {
            // SAFETY: the caller guarantees `len` readable bytes at `buf`.
            unsafe { std::slice::from_raw_parts(buf, len) }
        };
        let key = (self.rank, peer, tag);
        self.w.messages.fetch_add(1, Ordering::Relaxed);
        self.w.bytes.fetch_add(len as u64, Ordering::Relaxed);
        let mut st = self.w.st.lock();
        if let Some(s) = st.posted.remove(&key) {
            drop(st);
            s.fill_from(data);
        } else {
            assert!(
                st.msgs.insert(key, data.to_vec()).is_none(),
                "two messages from rank {} to rank {peer} with tag {tag:#x}",
                self.rank
            );
        }
        self.w.word.bump_wake();
        Ok(())
    }

    unsafe fn irecv(&self, peer: u32, tag: Tag, buf: *mut u8, len: usize) -> HResult<Recv> {
        let key = (peer, self.rank, tag);
        let slot = Arc::new(RecvSlot::new(buf, len));
        let mut st = self.w.st.lock();
        if let Some(m) = st.msgs.remove(&key) {
            drop(st);
            slot.fill_from(&m);
        } else if let Some(why) = st.dead.get(&peer) {
            slot.fail(HcclError::new(
                HCCL_E_REMOTE,
                format!("rank {peer} is gone: {why}"),
            ));
        } else {
            st.posted.insert(key, slot.clone());
        }
        Ok(Recv { slot, peer, tag })
    }

    fn wait(&self, r: &Recv, deadline: Option<Instant>) -> HResult<()> {
        let p = Policy::for_participants(self.w.n);
        match wait_until(
            &p,
            &self.w.word,
            || r.slot.finished(),
            deadline,
            || Ok::<(), ()>(()),
        ) {
            Ok(()) => {}
            Err(WaitError::TimedOut) | Err(WaitError::Check(())) => {
                return Err(HcclError::new(
                    HCCL_E_TIMEOUT,
                    format!(
                        "rank {}: timed out waiting for a message from rank {} (tag {:#x})",
                        self.rank, r.peer, r.tag
                    ),
                ))
            }
        }
        match r.slot.state() {
            super::DONE => Ok(()),
            _ => Err(r
                .slot
                .error()
                .unwrap_or_else(|| HcclError::new(HCCL_E_REMOTE, "receive failed"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn exchange_and_death() {
        let w = World::new(3);
        let nets: Vec<InProcNet> = (0..3).map(|r| w.net(r)).collect();
        let mut got = [0u8; 3];
        // SAFETY: buffers outlive the waits.
        let r = unsafe { nets[1].irecv(0, 1, got.as_mut_ptr(), 3).unwrap() };
        // SAFETY: test buffers outlive the transfers and waits that use them.
        unsafe { nets[0].send(1, 1, b"abc".as_ptr(), 3, None).unwrap() };
        nets[1].wait(&r, None).unwrap();
        assert_eq!(&got, b"abc");
        // SAFETY: test buffers outlive the transfers and waits that use them.
        unsafe { nets[2].send(1, 2, b"xyz".as_ptr(), 3, None).unwrap() };
        // SAFETY: test buffers outlive the transfers and waits that use them.
        let r = unsafe { nets[1].irecv(2, 2, got.as_mut_ptr(), 3).unwrap() };
        nets[1].wait(&r, None).unwrap();
        assert_eq!(&got, b"xyz");
        // SAFETY: test buffers outlive the transfers and waits that use them.
        let r = unsafe { nets[1].irecv(0, 3, got.as_mut_ptr(), 3).unwrap() };
        w.kill(0, "killed by the test");
        let e = nets[1]
            .wait(&r, Some(Instant::now() + Duration::from_secs(5)))
            .unwrap_err();
        assert!(
            e.msg.contains("rank 0 is gone: killed by the test"),
            "{}",
            e.msg
        );
        assert_eq!(w.leftovers(), 0);
    }
}
