//! The fast XML reader's hot loop (xmlfast.rs): the elements most documents are made of,
//! ``<name>text</name>``, ``<name>`` opening a container and ``</name>`` closing one (names
//! without a prefix, tags without attributes or white space; a start tag's name and text
//! from [`chars::element32`]'s window), read with the reader's state in a few locals (the
//! element arena and the open stack taken out of the reader while the loop runs). Anything else leaves the loop at its ``<`` for [`P::step`], the reader's
//! general path, which reads one tag the way it always has; the loop then goes on.
//!
//! Every element the loop takes is one [`P::step`] would take, read to the same arena entry:
//! the same checks (a name's bytes, the text's characters, the end tag's name, the depth) in
//! another order, and where one fails nothing is written yet: the general path reads the tag
//! again from its ``<`` (and refuses, or takes, as before).

use super::chars::{self, name_start, Text};
use super::{link, slot, El, Open, Other, COLON, F, FIRST, MAX_DEPTH, NEXT, NONE, P};
use crate::tape::Str;

#[cfg(test)]
thread_local! {
    /// Whether [`P::body`] reads every tag by the general path alone (the reader before the
    /// hot loop), for the tests that compare the two.
    pub(super) static GENERAL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

impl<'a> P<'a> {
    /// The elements inside the root after its start tag: the hot loop, and [`P::step`] for
    /// what it leaves, until the root closes.
    pub(super) fn body(&mut self) -> F<()> {
        // (elsewhere than x86_64 the window never answers: every tag the general path's,
        // in line as before the hot loop)
        #[cfg(test)]
        let general = GENERAL.get();
        #[cfg(not(test))]
        let general = false;
        if general || !chars::SCAN16 {
            while !self.open.is_empty() {
                self.tag()?;
            }
            return Ok(());
        }
        while !self.open.is_empty() {
            if !self.hot()? {
                self.step()?;
            }
        }
        Ok(())
    }

    /// [`P::tag`] out of line (the hot loop's exits).
    #[inline(never)]
    fn step(&mut self) -> F<()> {
        self.tag()
    }

    /// One tag (at its ``<``) as the general path reads it, then the text after it.
    #[inline(always)]
    fn tag(&mut self) -> F<()> {
        match self.s.get(self.at + 1) {
            Some(b'/') => self.end_tag()?,
            Some(b) if name_start(*b) => self.start_tag()?,
            _ => return Err(Other), // comment, CDATA, PI, or no markup
        }
        if !self.open.is_empty() {
            self.text(false)?; // the tail: checked, not kept
        }
        Ok(())
    }

    /// The hot loop from a ``<``: true when the root closed, false at a ``<`` it leaves to
    /// [`P::step`].
    #[inline(never)]
    fn hot(&mut self) -> F<bool> {
        let s = self.s;
        let n = s.len();
        let mut els = std::mem::take(&mut self.fast.els);
        let mut open = std::mem::take(&mut self.open);
        let mut at = self.at;
        let mut default = self.default;
        let scope_at = self.innermost.wrapping_add(1);
        let mark = self.scope.len();
        let decls_at = self.fast.decls.len() as u32;
        let read = (|| -> F<bool> {
            loop {
                // at a '<', an element open
                debug_assert!(s[at] == b'<' && !open.is_empty());
                if at + 1 >= n {
                    return Err(Other);
                }
                if s[at + 1] == b'/' {
                    let top = open.last().expect("an element is open");
                    let len = top.name.1 - top.name.0;
                    let end = at + 2 + len;
                    if end >= n
                        || s[end] != b'>'
                        || top.decls.1 != 0
                        || !chars::same_in(s, at + 2, top.name.0, len)
                    {
                        return Ok(false); // white space, declarations: the general path
                    }
                    open.pop();
                    let Some(parent) = open.last() else {
                        at = end + 1;
                        return Ok(true);
                    };
                    default = parent.default;
                    at = end + 1;
                } else {
                    if !name_start(s[at + 1]) {
                        return Ok(false);
                    }
                    let start = at + 1;
                    let Some((name, window)) = chars::element32(s, start) else {
                        return Ok(false);
                    };
                    if open.len() >= MAX_DEPTH {
                        return Ok(false);
                    }
                    let len = name - start;
                    let from = name + 1;
                    let (text, colon, end) = match window {
                        Text::Ends(end, colon) => (Str::borrowed(from, end - from), colon, end),
                        Text::Plain(on, colon) => match chars::plain16(s, on) {
                            Some((end, more)) => {
                                (Str::borrowed(from, end - from), colon | more, end)
                            }
                            None => {
                                self.at = from;
                                let (text, colon) = self.text_run(true)?;
                                (text, colon, self.at)
                            }
                        },
                        Text::Other => {
                            self.at = from;
                            let (text, colon) = self.text_run(true)?;
                            (text, colon, self.at)
                        }
                    };
                    let index = els.len() as u32;
                    let parent = open.last_mut().expect("an element is open");
                    link(&mut els, parent.link, index);
                    parent.link = slot(index, NEXT);
                    els.push(El {
                        local: (start as u32, len as u32),
                        ns: default,
                        first: NONE,
                        next: NONE,
                        text,
                        scope_colon: scope_at | if colon { COLON } else { 0 },
                    });
                    // ``</name>`` right after the text: a leaf, closed here
                    let close = end + 2 + len;
                    if close < n
                        && s[end + 1] == b'/'
                        && s[close] == b'>'
                        && chars::same_in(s, end + 2, start, len)
                    {
                        at = close + 1;
                    } else {
                        open.push(Open {
                            name: (start, name),
                            scope: mark,
                            link: slot(index, FIRST),
                            default,
                            decls: (decls_at, 0),
                        });
                        at = end;
                        continue;
                    }
                }
                // the tail after an end tag: checked, not kept
                if s.get(at) != Some(&b'<') {
                    if let Some((end, _)) = chars::plain16(s, at) {
                        at = end;
                    } else {
                        self.at = at;
                        self.text_run(false)?;
                        at = self.at;
                    }
                }
            }
        })();
        self.at = at;
        self.default = default;
        self.fast.els = els;
        self.open = open;
        read
    }
}
