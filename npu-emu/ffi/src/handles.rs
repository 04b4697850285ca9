//! Tables of live handles: every opaque object a C caller holds (`aclDataBuffer *`,
//! `aclTensorDesc *`, `aclrtStream`, `HcclComm`, `aclTensor *` …) is an entry of a
//! [`HandleTable`], and the pointer the caller holds is a tagged id, never an address.
//!
//! An id is `tag << 48 | serial << 4`: `tag` names the kind of object (two ASCII letters,
//! [`HandleKind`]), `serial` counts every handle this library made (never reused, not even
//! after the table is emptied or the runtime re-initialised), and the low bits are zero so
//! the value looks like an aligned pointer. Ids are only looked up, never dereferenced, so a
//! destroyed, foreign or garbage handle is an error whose message says which of these it is
//! ([`HandleError`]) instead of undefined behaviour.
//!
//! A table has no lock of its own: its owner decides (one `Mutex` per table, or one lock over
//! several tables that change together, as the runtime's contexts, streams and events).

use crate::globals::{HANDLE_KINDS, HANDLE_SERIAL};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};

/// A kind of handle: its tag and how messages name it.
pub struct HandleKind {
    tag: u16,
    /// What the object is called in messages (`aclDataBuffer`, `stream`).
    pub name: &'static str,
    /// The call that makes one (`aclCreateDataBuffer`), for the message about foreign values.
    pub made_by: &'static str,
    /// Why a handle of this kind that the library made is no longer live.
    pub stale: &'static str,
    /// Whether [`HANDLE_KINDS`] knows this kind (it is added with its first handle).
    known: AtomicBool,
}

impl HandleKind {
    /// A kind tagged with two ASCII letters (distinct within one library).
    pub const fn new(tag: [u8; 2], name: &'static str, made_by: &'static str) -> HandleKind {
        HandleKind {
            tag: u16::from_be_bytes(tag),
            name,
            made_by,
            stale: "it was destroyed",
            known: AtomicBool::new(false),
        }
    }

    /// The same kind with another reason for stale handles.
    pub const fn stale_because(mut self, why: &'static str) -> HandleKind {
        self.stale = why;
        self
    }

    fn article(&self) -> &'static str {
        match self.name.as_bytes().first() {
            Some(b'a' | b'e' | b'i' | b'o' | b'u' | b'A' | b'E' | b'I' | b'O' | b'U') => "an",
            _ => "a",
        }
    }

    /// Whether `h` carries this kind's tag.
    pub fn tags(&self, h: u64) -> bool {
        (h >> 48) as u16 == self.tag
    }

    fn note(&'static self) {
        if !self.known.load(Ordering::Relaxed) {
            let mut kinds = HANDLE_KINDS.lock();
            if !self.known.swap(true, Ordering::Relaxed) {
                kinds.push(self);
            }
        }
    }

    /// A fresh id of this kind.
    pub fn new_id(&'static self) -> u64 {
        self.note();
        let serial = HANDLE_SERIAL.fetch_add(1, Ordering::Relaxed) & SERIAL_MASK;
        (u64::from(self.tag) << 48) | (serial << 4)
    }
}

const SERIAL_MASK: u64 = (1 << 44) - 1;

/// The serial number inside a handle (1, 2, … in creation order across every table of the
/// library): a small number for messages and ids such as a stream's.
pub fn serial(h: u64) -> u64 {
    (h >> 4) & SERIAL_MASK
}

/// Why a value is not a live handle of the wanted kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Problem {
    /// The value is 0 (NULL).
    Null,
    /// A handle of the wanted kind that is no longer live.
    Stale,
    /// A handle of another kind of this library (its name).
    OtherKind(&'static str),
    /// Not a handle this library made.
    Foreign,
}

/// A value that is not a live handle of the wanted kind; its `Display` is the message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HandleError {
    pub handle: u64,
    pub problem: Problem,
    arg: String,
    name: &'static str,
    article: &'static str,
    stale: &'static str,
    made_by: &'static str,
}

impl HandleError {
    /// Classify `h`, which is not a live handle of kind `want`.
    pub fn new(want: &'static HandleKind, h: u64, arg: &str) -> HandleError {
        let problem = if h == 0 {
            Problem::Null
        } else if want.tags(h) && serial(h) != 0 && h & 0xf == 0 {
            Problem::Stale
        } else {
            let tag = (h >> 48) as u16;
            match HANDLE_KINDS.lock().iter().find(|k| k.tag == tag) {
                Some(k) if h & 0xf == 0 => Problem::OtherKind(k.name),
                _ => Problem::Foreign,
            }
        };
        HandleError {
            handle: h,
            problem,
            arg: arg.to_string(),
            name: want.name,
            article: want.article(),
            stale: want.stale,
            made_by: want.made_by,
        }
    }
}

impl fmt::Display for HandleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (arg, h, name) = (&self.arg, self.handle, self.name);
        match &self.problem {
            Problem::Null => write!(f, "argument {arg} is NULL"),
            Problem::Stale => write!(f, "{arg} = {h:#x} is not a live {name} ({})", self.stale),
            Problem::OtherKind(other) => {
                let a = HandleKind::new(*b"??", other, "").article();
                write!(
                    f,
                    "{arg} = {h:#x} is {a} {other} handle, not {} {name}",
                    self.article
                )
            }
            Problem::Foreign => write!(
                f,
                "{arg} = {h:#x} is not a live {name} (it is not {} {name} handle that {} \
                 returned: a garbage or foreign pointer)",
                self.article, self.made_by
            ),
        }
    }
}

/// The live handles of one or more kinds and their objects.
pub struct HandleTable<T> {
    kind: &'static HandleKind,
    map: BTreeMap<u64, T>,
}

impl<T> HandleTable<T> {
    /// An empty table whose handles are of `kind` (unless inserted with [`Self::insert_as`]).
    pub const fn new(kind: &'static HandleKind) -> HandleTable<T> {
        HandleTable {
            kind,
            map: BTreeMap::new(),
        }
    }

    /// Keep `v` and give its new handle.
    pub fn insert(&mut self, v: T) -> u64 {
        self.insert_as(self.kind, v)
    }

    /// Keep `v` under a handle of `kind` (a table holding several kinds).
    pub fn insert_as(&mut self, kind: &'static HandleKind, v: T) -> u64 {
        self.insert_with(kind, |_| v)
    }

    /// Keep the object `make` builds from its new handle (objects that know their handle).
    pub fn insert_with(&mut self, kind: &'static HandleKind, make: impl FnOnce(u64) -> T) -> u64 {
        let h = kind.new_id();
        self.map.insert(h, make(h));
        h
    }

    /// Keep `v` under `h`, an id made earlier by [`HandleKind::new_id`] and not used yet
    /// (objects that refer to each other's handles, made before either is kept).
    pub fn insert_at(&mut self, h: u64, v: T) {
        debug_assert!(!self.map.contains_key(&h), "handle {h:#x} used twice");
        self.map.insert(h, v);
    }

    fn error(&self, kind: &'static HandleKind, h: u64, arg: &str) -> HandleError {
        HandleError::new(kind, h, arg)
    }

    /// The object of a live handle of the table's kind; `arg` names the argument in the
    /// message.
    pub fn get(&self, h: u64, arg: &str) -> Result<&T, HandleError> {
        self.get_as(self.kind, h, arg)
    }

    /// The object of a live handle of `kind`.
    pub fn get_as(&self, kind: &'static HandleKind, h: u64, arg: &str) -> Result<&T, HandleError> {
        match self.map.get(&h) {
            Some(v) if kind.tags(h) => Ok(v),
            _ => Err(self.error(kind, h, arg)),
        }
    }

    /// Like [`Self::get`], for changing the object.
    pub fn get_mut(&mut self, h: u64, arg: &str) -> Result<&mut T, HandleError> {
        let kind = self.kind;
        self.get_mut_as(kind, h, arg)
    }

    /// Like [`Self::get_as`], for changing the object.
    pub fn get_mut_as(
        &mut self,
        kind: &'static HandleKind,
        h: u64,
        arg: &str,
    ) -> Result<&mut T, HandleError> {
        if kind.tags(h) {
            if let Some(v) = self.map.get_mut(&h) {
                return Ok(v);
            }
        }
        Err(HandleError::new(kind, h, arg))
    }

    /// Remove a live handle of the table's kind and give its object back.
    pub fn remove(&mut self, h: u64, arg: &str) -> Result<T, HandleError> {
        self.remove_as(self.kind, h, arg)
    }

    /// Remove a live handle of `kind` and give its object back.
    pub fn remove_as(
        &mut self,
        kind: &'static HandleKind,
        h: u64,
        arg: &str,
    ) -> Result<T, HandleError> {
        if kind.tags(h) {
            if let Some(v) = self.map.remove(&h) {
                return Ok(v);
            }
        }
        Err(HandleError::new(kind, h, arg))
    }

    /// The object of `h` whatever its kind, if `h` is live.
    pub fn peek(&self, h: u64) -> Option<&T> {
        self.map.get(&h)
    }

    /// Whether `h` is a live handle of this table.
    pub fn contains(&self, h: u64) -> bool {
        self.map.contains_key(&h)
    }

    /// Live handles and their objects, oldest first.
    pub fn iter(&self) -> impl Iterator<Item = (u64, &T)> {
        self.map.iter().map(|(h, v)| (*h, v))
    }

    /// Live objects, oldest first.
    pub fn values(&self) -> impl Iterator<Item = &T> {
        self.map.values()
    }

    /// Keep only the entries for which `keep` is true.
    pub fn retain(&mut self, mut keep: impl FnMut(u64, &mut T) -> bool) {
        self.map.retain(|h, v| keep(*h, v));
    }

    /// Remove every entry, oldest first.
    pub fn drain(&mut self) -> Vec<(u64, T)> {
        std::mem::take(&mut self.map).into_iter().collect()
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static APPLE: HandleKind = HandleKind::new(*b"AP", "apple", "makeApple");
    static PEAR: HandleKind =
        HandleKind::new(*b"PE", "pear", "makePear").stale_because("it was eaten");

    #[test]
    fn live_stale_other_foreign() {
        let mut apples = HandleTable::new(&APPLE);
        let mut pears = HandleTable::new(&PEAR);
        let a = apples.insert(1u32);
        let b = apples.insert(2u32);
        let p = pears.insert("p");
        assert_ne!(a, b);
        assert_eq!(a & 0xf, 0);
        assert!(serial(b) > serial(a));
        assert_eq!(*apples.get(a, "x").unwrap(), 1);
        *apples.get_mut(b, "x").unwrap() = 5;
        assert_eq!(apples.remove(b, "x").unwrap(), 5);

        let e = apples.get(b, "fruit").unwrap_err();
        assert_eq!(e.problem, Problem::Stale);
        assert_eq!(
            e.to_string(),
            format!("fruit = {b:#x} is not a live apple (it was destroyed)")
        );
        let e = apples.get(p, "fruit").unwrap_err();
        assert_eq!(e.problem, Problem::OtherKind("pear"));
        assert!(
            e.to_string().ends_with("is a pear handle, not an apple"),
            "{e}"
        );
        let e = apples.get(0x1234, "fruit").unwrap_err();
        assert_eq!(e.problem, Problem::Foreign);
        assert_eq!(
            e.to_string(),
            "fruit = 0x1234 is not a live apple (it is not an apple handle that makeApple \
             returned: a garbage or foreign pointer)"
        );
        assert_eq!(
            apples.get(0, "fruit").unwrap_err().to_string(),
            "argument fruit is NULL"
        );

        assert_eq!(pears.remove(p, "p").unwrap(), "p");
        let e = pears.remove(p, "p").unwrap_err();
        assert!(
            e.to_string().ends_with("is not a live pear (it was eaten)"),
            "{e}"
        );
        assert!(pears.is_empty() && apples.len() == 1);
    }

    #[test]
    fn several_kinds_in_one_table() {
        let mut t = HandleTable::new(&APPLE);
        let a = t.insert(1);
        let p = t.insert_as(&PEAR, 2);
        assert!(t.get_as(&PEAR, p, "x").is_ok());
        assert_eq!(
            t.get(p, "x").unwrap_err().problem,
            Problem::OtherKind("pear")
        );
        assert_eq!(t.peek(a), Some(&1));
        assert_eq!(t.iter().map(|(h, _)| h).collect::<Vec<_>>().len(), 2);
    }
}
