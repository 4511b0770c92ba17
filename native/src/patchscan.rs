//! The early answer for a JSON push-change-update (RFC 8641 section 3.10, its yang-patch
//! edits of RFC 8072): the native key pass leaves every yang-patch to the reference
//! (patch.py, messages.py), so ``Decoder.keys`` and ``Decoder.instances`` say None before
//! parsing the document rather than after; the parse was the whole cost of the None, and made
//! MessageBuilder slower on yang-patch with the module than without.
//!
//! The notification's body member is named before any of its contents, so the first of
//! ``push-update"`` and ``push-change-update"`` in the bytes is the body's name unless
//! something before the body (the envelope's or a wrapper's values) spells one of them. Either
//! way the answer stays exact: "yang-patch" only ever makes the pass return None (the reference
//! answers, as it would after the parse), and anything else gets the full parse as before. A
//! name written with ``\u`` escapes is not seen here and is parsed as before.

const UPDATE: &[u8] = b"push-update\"";
const CHANGE: &[u8] = b"push-change-update\"";

/// Whether the first body name in ``data`` is ``push-change-update`` (a yang-patch).
pub fn is_patch(data: &[u8]) -> bool {
    let mut at = 0;
    while let Some(found) = data[at..].iter().position(|&b| b == b'p') {
        let rest = &data[at + found..];
        if rest.starts_with(UPDATE) {
            return false;
        }
        if rest.starts_with(CHANGE) {
            return true;
        }
        at += found + 1;
    }
    false
}
