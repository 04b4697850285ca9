//! The per-communicator ring of recent operations, printed with any HCCL failure so the user
//! sees what led up to it.

use parking_lot::Mutex;
use std::collections::VecDeque;
use std::time::Instant;

pub const DEPTH: usize = 16;

#[derive(Clone, Debug)]
pub enum Status {
    /// Enqueued on the stream, not run yet.
    Queued,
    Running,
    Ok {
        micros: u64,
    },
    Failed {
        code: i32,
    },
}

/// What an entry is about: a collective (its fingerprint, rendered only when printed, so
/// recording costs no formatting) or a text.
#[derive(Clone, Debug)]
pub enum What {
    Call(crate::fingerprint::Fp),
    Text(String),
}

impl What {
    pub fn render(&self) -> String {
        match self {
            What::Call(fp) => format!("{} #{}", fp.describe(), fp.seq),
            What::Text(s) => s.clone(),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Entry {
    pub seq: u64,
    pub what: What,
    pub at: Instant,
    pub status: Status,
}

#[derive(Default)]
pub struct History {
    ring: Mutex<VecDeque<Entry>>,
    /// Unique id per entry so updates find the right one.
    next: Mutex<u64>,
}

impl History {
    /// Record a new operation; returns its id for [`History::set`].
    pub fn push(&self, seq: u64, what: What, status: Status) -> u64 {
        let mut ring = self.ring.lock();
        if ring.len() == DEPTH {
            ring.pop_front();
        }
        let mut n = self.next.lock();
        *n += 1;
        let _ = seq;
        ring.push_back(Entry {
            seq: *n,
            what,
            at: Instant::now(),
            status,
        });
        *n
    }

    pub fn set(&self, id: u64, status: Status) {
        let mut ring = self.ring.lock();
        if let Some(e) = ring.iter_mut().find(|e| e.seq == id) {
            e.status = status;
        }
    }

    /// The ring as lines, oldest first.
    pub fn render(&self, title: &str) -> String {
        let ring = self.ring.lock();
        let now = Instant::now();
        let mut s = format!("{title}: last {} operations (oldest first):", ring.len());
        if ring.is_empty() {
            s.push_str(" none");
        }
        for e in ring.iter() {
            let ago = now.duration_since(e.at).as_micros();
            let st = match &e.status {
                Status::Queued => "queued on stream, not started".to_string(),
                Status::Running => "running on stream".to_string(),
                Status::Ok { micros } => format!("ok in {micros} us"),
                Status::Failed { code } => format!("FAILED ({})", crate::errors::code_name(*code)),
            };
            s.push_str(&format!("\n    {} — {st} ({ago} us ago)", e.what.render()));
        }
        s
    }
}
