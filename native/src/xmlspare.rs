//! The fast XML reader's buffers kept from one document to the next (xmlfast.rs): the element
//! arena and the per-document vectors, emptied, their lifetimes changed only while empty.

use super::{Decl, El, Fast, Known, Open, ReadDecl, Run};

thread_local! {
    /// The arena of the last document, kept for the next (as the tape's: a large allocation
    /// per notification costs page faults each time).
    static SPARE: std::cell::RefCell<Vec<El<'static>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Arenas over this many elements are not kept (8 MB).
pub(super) const SPARE_MAX: usize = 1 << 18;

pub(super) fn spare_arena<'a>(capacity: usize) -> Vec<El<'a>> {
    let mut els = SPARE.with(|spare| std::mem::take(&mut *spare.borrow_mut()));
    els.reserve(capacity);
    // SAFETY: the vector is empty; El<'static> and El<'a> differ in lifetime only.
    unsafe { std::mem::transmute::<Vec<El<'static>>, Vec<El<'a>>>(els) }
}

impl Drop for Fast<'_> {
    fn drop(&mut self) {
        let mut els = std::mem::take(&mut self.els);
        if els.capacity() <= SPARE_MAX {
            els.clear();
            // SAFETY: the vector is empty (no reference to the input is kept).
            let els = unsafe { std::mem::transmute::<Vec<El<'_>>, Vec<El<'static>>>(els) };
            SPARE.with(|spare| *spare.borrow_mut() = els);
        }
        let namespaces = keep(std::mem::take(&mut self.namespaces));
        let mut decls = std::mem::take(&mut self.decls);
        decls.clear();
        BUFFERS.with(|b| {
            let mut b = b.borrow_mut();
            b.namespaces = namespaces;
            b.decls = decls;
        });
    }
}

/// Per-document buffers kept for the next document (empty between documents): their
/// allocation cost as much as a small notification's scan.
#[derive(Default)]
pub(super) struct Buffers {
    pub(super) namespaces: Vec<&'static str>,
    pub(super) scope: Vec<(&'static str, u32)>,
    pub(super) open: Vec<Open>,
    pub(super) runs: Vec<Run>,
    pub(super) declared: Vec<(&'static str, u32)>,
    pub(super) names: Vec<(u32, u32, u32)>,
    pub(super) epoch: u32,
    pub(super) decls: Vec<Decl>,
    pub(super) known: Vec<Known>,
    pub(super) read: Vec<ReadDecl>,
}

thread_local! {
    pub(super) static BUFFERS: std::cell::RefCell<Buffers> = std::cell::RefCell::new(Buffers::default());
}

/// An empty vector of ``&'static str``s as one of ``&'a str``s.
pub(super) fn relent<'a, T>(mut v: Vec<&'static T>) -> Vec<&'a T>
where
    T: ?Sized,
{
    v.clear();
    // SAFETY: the vector is empty; the element types differ in lifetime only.
    unsafe { std::mem::transmute::<Vec<&'static T>, Vec<&'a T>>(v) }
}

/// The other way: an emptied vector kept past its document.
fn keep<T: ?Sized>(mut v: Vec<&T>) -> Vec<&'static T> {
    v.clear();
    // SAFETY: the vector is empty: no reference to the document is kept.
    unsafe { std::mem::transmute::<Vec<&T>, Vec<&'static T>>(v) }
}

pub(super) fn keep_scope(mut v: Vec<(&str, u32)>) -> Vec<(&'static str, u32)> {
    v.clear();
    // SAFETY: as keep.
    unsafe { std::mem::transmute::<Vec<(&str, u32)>, Vec<(&'static str, u32)>>(v) }
}

pub(super) fn lend_scope<'a>(mut v: Vec<(&'static str, u32)>) -> Vec<(&'a str, u32)> {
    v.clear();
    // SAFETY: as relent.
    unsafe { std::mem::transmute::<Vec<(&'static str, u32)>, Vec<(&'a str, u32)>>(v) }
}
