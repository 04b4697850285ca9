//! Events: markers recorded on a stream (DESIGN §2).
//!
//! `record` numbers the record (1, 2, …) on the host and enqueues a task that, when the
//! stream reaches it, stamps a `CLOCK_MONOTONIC` timestamp and marks that record number
//! complete. A stream waiting on an event captures the record number current at wait time
//! and blocks its worker until that record completes, so later records do not delay it.
//! `reset` is a task too: it makes the event "not recorded" again.
//!
//! If a record task is discarded (stream destroyed with force, or stop-on-failure), the record
//! still counts as finished so nobody waits forever, but it carries no timestamp.

use crate::codes::{
    ACL_ERROR_RT_EVENT_SYNC_TIMEOUT, ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID,
    ACL_ERROR_RT_INTERNAL_ERROR,
};
use crate::error::{Error, Result};
use crate::stream::Stream;
use crate::wait::{wait_until, Policy, Word};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL` (abi.md §1.5 B): end recorded before start.
pub const ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL: i32 = 107007;

/// Nanoseconds of `CLOCK_MONOTONIC`.
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[derive(Default)]
struct State {
    /// Records issued by the host so far.
    recorded: u64,
    /// Highest record number finished (run or discarded).
    completed: u64,
    /// Timestamp of the latest finished record, if it ran and no reset ran after it.
    timestamp_ns: Option<u64>,
    /// A record ran and no reset ran since.
    valid: bool,
}

/// One event.
pub struct Event {
    flags: u32,
    st: Mutex<State>,
    /// Notified when a record finishes (waiters sleep on it).
    finished: Word,
    waits_enqueued: AtomicU64,
    waits_done: AtomicU64,
}

/// What an event looks like right now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Status {
    /// The event was recorded at least once since creation.
    pub ever_recorded: bool,
    /// Every record issued so far has finished.
    pub complete: bool,
    /// The latest finished record ran (has a timestamp) and was not reset since.
    pub valid: bool,
    /// Every stream wait on this event has finished.
    pub waits_complete: bool,
}

struct RecordGuard {
    ev: Arc<Event>,
    n: u64,
    ran: bool,
}

impl RecordGuard {
    fn fire(&mut self) {
        self.ev.finish(self.n, Some(now_ns()));
        self.ran = true;
    }
}

impl Drop for RecordGuard {
    fn drop(&mut self) {
        if !self.ran {
            self.ev.finish(self.n, None);
        }
    }
}

/// A record numbered on the host whose completion happens later, when [`RecordTicket::fire`]
/// runs (a model's record of a real event at each execution). Dropped unfired, the record
/// still finishes, without a timestamp, so nobody waits forever.
pub struct RecordTicket(RecordGuard);

impl RecordTicket {
    /// The record reaches the device: timestamp it and mark it complete.
    pub fn fire(mut self) {
        self.0.fire();
    }
}

impl Event {
    /// Number the next record now; it completes when the ticket fires.
    pub fn reserve_record(self: &Arc<Self>) -> RecordTicket {
        let n = {
            let mut st = self.st.lock();
            st.recorded += 1;
            st.recorded
        };
        RecordTicket(RecordGuard {
            ev: self.clone(),
            n,
            ran: false,
        })
    }

    /// Make the event "not recorded" now (a model's `aclrtResetEvent` when it runs).
    pub fn reset_now(&self) {
        let mut st = self.st.lock();
        st.valid = false;
        st.timestamp_ns = None;
    }

    /// The number of the latest record issued so far (0 = never recorded).
    pub fn records_issued(&self) -> u64 {
        self.st.lock().recorded
    }

    /// Block the calling (worker) thread until record `target` has finished, giving up
    /// when `cancel` says so (checked every 20 ms) or after `timeout`: false then.
    pub fn wait_record(
        &self,
        target: u64,
        timeout: Option<Duration>,
        cancel: &dyn Fn() -> bool,
    ) -> bool {
        self.wait_until(|st| st.completed >= target, timeout, cancel)
    }

    /// Block until the event is in the recorded state (a record ran and no reset ran
    /// since), as a model's wait on an `ACL_EVENT_EXTERNAL` event does; false on timeout or
    /// cancel.
    pub fn wait_set(&self, timeout: Option<Duration>, cancel: &dyn Fn() -> bool) -> bool {
        self.wait_until(|st| st.valid, timeout, cancel)
    }

    fn wait_until(
        &self,
        cond: impl Fn(&State) -> bool,
        timeout: Option<Duration>,
        cancel: &dyn Fn() -> bool,
    ) -> bool {
        let deadline = timeout.map(|t| Instant::now() + t);
        let ready = || cond(&self.st.lock());
        let check = || if cancel() { Err(()) } else { Ok(()) };
        wait_until(
            &Policy::EVENT_CANCELLABLE,
            &self.finished,
            ready,
            deadline,
            check,
        )
        .is_ok()
    }

    /// A new event created with `flags` (the `ACL_EVENT_*` bits, kept for queries).
    pub fn new(flags: u32) -> Arc<Event> {
        Arc::new(Event {
            flags,
            st: Mutex::new(State::default()),
            finished: Word::new(),
            waits_enqueued: AtomicU64::new(0),
            waits_done: AtomicU64::new(0),
        })
    }

    /// The creation flags.
    pub fn flags(&self) -> u32 {
        self.flags
    }

    /// Record the event on `stream` (`aclrtRecordEvent`).
    pub fn record(self: &Arc<Self>, stream: &Stream) -> Result<()> {
        let n = {
            let mut st = self.st.lock();
            st.recorded += 1;
            st.recorded
        };
        let mut guard = RecordGuard {
            ev: self.clone(),
            n,
            ran: false,
        };
        stream.enqueue(Box::new(move || {
            guard.fire();
            Ok(())
        }))
    }

    /// Make the event "not recorded" when `stream` reaches this point (`aclrtResetEvent`).
    pub fn reset(self: &Arc<Self>, stream: &Stream) -> Result<()> {
        let ev = self.clone();
        stream.enqueue(Box::new(move || {
            let mut st = ev.st.lock();
            st.valid = false;
            st.timestamp_ns = None;
            Ok(())
        }))
    }

    /// Make `stream` wait (on its worker) until the record current now has finished
    /// (`aclrtStreamWaitEvent`). An event never recorded imposes no wait. `timeout`
    /// bounds the wait; a timeout becomes the stream's asynchronous error.
    pub fn wait_on(self: &Arc<Self>, stream: &Stream, timeout: Option<Duration>) -> Result<()> {
        let target = self.st.lock().recorded;
        let ev = self.clone();
        self.waits_enqueued.fetch_add(1, Ordering::SeqCst);
        struct Done(Arc<Event>);
        impl Drop for Done {
            fn drop(&mut self) {
                self.0.waits_done.fetch_add(1, Ordering::SeqCst);
            }
        }
        let done = Done(ev.clone());
        stream.enqueue(Box::new(move || {
            let _done = done;
            if target == 0 || ev.wait_finished(target, timeout) {
                Ok(())
            } else {
                Err(Error::new(
                    ACL_ERROR_RT_EVENT_SYNC_TIMEOUT,
                    format!(
                        "a stream wait on an event timed out after {} ms (record {target} never finished)",
                        timeout.map_or(0, |d| d.as_millis())
                    ),
                ))
            }
        }))
    }

    /// Block the host until the record current now has finished; `None` = forever,
    /// `Some(0)` = poll once. `ACL_ERROR_RT_EVENT_SYNC_TIMEOUT` on timeout.
    pub fn synchronize(&self, timeout: Option<Duration>) -> Result<()> {
        let target = self.st.lock().recorded;
        if target == 0 || self.wait_finished(target, timeout) {
            Ok(())
        } else {
            Err(Error::new(
                ACL_ERROR_RT_EVENT_SYNC_TIMEOUT,
                format!(
                    "the event did not complete within {} ms",
                    timeout.map_or(0, |d| d.as_millis())
                ),
            ))
        }
    }

    /// The event's state.
    pub fn status(&self) -> Status {
        let st = self.st.lock();
        Status {
            ever_recorded: st.recorded > 0,
            complete: st.completed >= st.recorded,
            valid: st.valid,
            waits_complete: self.waits_done.load(Ordering::SeqCst)
                >= self.waits_enqueued.load(Ordering::SeqCst),
        }
    }

    /// Timestamp (ns, `CLOCK_MONOTONIC`) of the latest finished record. Errors if the event
    /// was never recorded, was reset, or its latest record has not finished.
    pub fn timestamp_ns(&self) -> Result<u64> {
        // Codes as CANN's Event::GetTimeStamp / ElapsedTime: no record (never recorded,
        // reset) is RT_ERROR_EVENT_RECORDER_NULL -> ACL_ERROR_RT_INTERNAL_ERROR; a record not
        // reached yet has no valid timestamp -> ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID.
        let st = self.st.lock();
        if st.recorded == 0 {
            return Err(Error::new(
                ACL_ERROR_RT_INTERNAL_ERROR,
                "the event was never recorded (call aclrtRecordEvent first)",
            ));
        }
        if st.completed < st.recorded {
            return Err(Error::new(
                ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID,
                "the event's latest record has not completed yet (synchronize the stream or the event first)",
            ));
        }
        match (st.valid, st.timestamp_ns) {
            (true, Some(t)) => Ok(t),
            _ => Err(Error::new(
                ACL_ERROR_RT_INTERNAL_ERROR,
                "the event has no timestamp: it was reset, or its record task was discarded",
            )),
        }
    }

    /// Milliseconds between two finished records (`aclrtEventElapsedTime`).
    pub fn elapsed_ms(start: &Event, end: &Event) -> Result<f32> {
        let a = start
            .timestamp_ns()
            .map_err(|e| Error::new(e.code, format!("startEvent: {}", e.msg)))?;
        let b = end
            .timestamp_ns()
            .map_err(|e| Error::new(e.code, format!("endEvent: {}", e.msg)))?;
        if b < a {
            return Err(Error::new(
                ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL,
                format!("endEvent completed {} ns before startEvent", a - b),
            ));
        }
        Ok((b - a) as f64 as f32 / 1.0e6)
    }

    fn finish(&self, n: u64, ts: Option<u64>) {
        let mut st = self.st.lock();
        if n >= st.completed {
            st.completed = n;
            st.timestamp_ns = ts;
            st.valid = ts.is_some();
        }
        drop(st);
        self.finished.notify();
    }

    /// Wait until record `target` finished; false on timeout.
    fn wait_finished(&self, target: u64, timeout: Option<Duration>) -> bool {
        let done = || self.st.lock().completed >= target;
        if done() {
            return true;
        }
        if timeout == Some(Duration::ZERO) {
            return false;
        }
        let deadline = timeout.map(|t| Instant::now() + t);
        wait_until(&Policy::EVENT, &self.finished, done, deadline, || {
            Ok::<(), ()>(())
        })
        .is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    #[test]
    fn record_sync_elapsed() {
        let s = Stream::new("ev").unwrap();
        let a = Event::new(0);
        let b = Event::new(0);
        assert!(a.timestamp_ns().is_err());
        a.record(&s).unwrap();
        s.enqueue(Box::new(|| {
            std::thread::sleep(Duration::from_millis(2));
            Ok(())
        }))
        .unwrap();
        b.record(&s).unwrap();
        b.synchronize(None).unwrap();
        let ms = Event::elapsed_ms(&a, &b).unwrap();
        assert!(ms >= 2.0, "{ms}");
        let e = Event::elapsed_ms(&b, &a).unwrap_err();
        assert_eq!(e.code, ACL_ERROR_RT_EVENT_TIMESTAMP_REVERSAL);
        assert!(a.status().complete && a.status().valid);
        a.reset(&s).unwrap();
        s.synchronize(None).unwrap();
        assert!(!a.status().valid);
    }

    #[test]
    fn cross_stream_wait_orders_work() {
        let s1 = Stream::new("s1").unwrap();
        let s2 = Stream::new("s2").unwrap();
        let ev = Event::new(0);
        let gate = Arc::new(AtomicBool::new(false));
        let log = Arc::new(Mutex::new(Vec::new()));
        let (g, l) = (gate.clone(), log.clone());
        s1.enqueue(Box::new(move || {
            while !g.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(1));
            }
            l.lock().push("s1");
            Ok(())
        }))
        .unwrap();
        ev.record(&s1).unwrap();
        ev.wait_on(&s2, None).unwrap();
        let l = log.clone();
        s2.enqueue(Box::new(move || {
            l.lock().push("s2");
            Ok(())
        }))
        .unwrap();
        assert!(!ev.status().waits_complete);
        std::thread::sleep(Duration::from_millis(5));
        assert!(log.lock().is_empty());
        assert_eq!(
            ev.synchronize(Some(Duration::ZERO)).unwrap_err().code,
            ACL_ERROR_RT_EVENT_SYNC_TIMEOUT
        );
        gate.store(true, Ordering::SeqCst);
        s2.synchronize(None).unwrap();
        assert_eq!(*log.lock(), vec!["s1", "s2"]);
        assert!(ev.status().waits_complete);
    }

    #[test]
    fn discarded_record_releases_waiters() {
        let s = Stream::new("x").unwrap();
        let ev = Event::new(0);
        let gate = Arc::new(AtomicBool::new(false));
        let g = gate.clone();
        s.enqueue(Box::new(move || {
            while !g.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(1));
            }
            Ok(())
        }))
        .unwrap();
        ev.record(&s).unwrap();
        let g = gate.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(5));
            g.store(true, Ordering::SeqCst);
        });
        s.destroy(true);
        t.join().unwrap();
        ev.synchronize(None).unwrap();
        assert!(ev.timestamp_ns().is_err());
    }
}
