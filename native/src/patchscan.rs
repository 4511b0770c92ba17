//! The early answer for a push-change-update (RFC 8641 section 3.10, its yang-patch
//! edits of RFC 8072): the native key pass leaves every yang-patch to the reference
//! (patch.py, messages.py), so ``Decoder.keys``, ``Decoder.instances`` (JSON) and
//! ``Decoder.keys_xml`` (XML) say None before parsing the document rather than after; the
//! parse (two for XML) was the whole cost of the None, and made MessageBuilder slower on
//! yang-patch with the module than without.
//!
//! The notification's body member is named before any of its contents, so the first of
//! ``push-update"`` and ``push-change-update"`` in the bytes is the body's name unless
//! something before the body (the envelope's or a wrapper's values) spells one of them. Either
//! way the answer stays exact: "yang-patch" only ever makes the pass return None (the reference
//! answers, as it would after the parse), and anything else gets the full parse as before. A
//! name written with ``\u`` escapes is not seen here and is parsed as before. In XML the body
//! is the first start tag named ``push-update`` or ``push-change-update`` (any prefix).
//!
//! Since then ``Decoder.keys`` keys a JSON yang-patch (patchwalk.rs) and ``Decoder.keys_xml``
//! an XML one its fast reader frames (xmlpatch.rs): ``is_xml_patch`` now picks that pass,
//! whose framing reads the body itself (a push-update misjudged a yang-patch gets None).

const UPDATE: &[u8] = b"push-update\"";
const CHANGE: &[u8] = b"push-change-update\"";

/// Whether the first body name in ``data`` is ``push-change-update`` (a yang-patch).
pub fn is_patch(data: &[u8]) -> bool {
    for found in memchr::memchr_iter(b'p', data) {
        let rest = &data[found..];
        if rest.starts_with(UPDATE) {
            return false;
        }
        if rest.starts_with(CHANGE) {
            return true;
        }
    }
    false
}

/// Whether the first start tag in ``data`` named ``push-update`` or ``push-change-update``
/// (any prefix; a comment or text spelling one counts too, which only ever leaves a document
/// to the reference) is ``push-change-update``.
pub fn is_xml_patch(data: &[u8]) -> bool {
    for start in memchr::memchr_iter(b'p', data) {
        if start == 0 || !matches!(data[start - 1], b'<' | b':') {
            continue;
        }
        let rest = &data[start..];
        let change = rest.starts_with(b"push-change-update");
        let name = if change {
            "push-change-update".len()
        } else if rest.starts_with(b"push-update") {
            "push-update".len()
        } else {
            continue;
        };
        if matches!(
            rest.get(name),
            Some(b'>' | b'/' | b' ' | b'\t' | b'\r' | b'\n')
        ) {
            return change;
        }
    }
    false
}
