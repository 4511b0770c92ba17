//! The early choice for an XML push-change-update (RFC 8641 section 3.10, its yang-patch
//! edits of RFC 8072): ``Decoder.keys_xml`` keys an XML yang-patch its fast reader frames
//! (xmlpatch.rs), and ``is_xml_patch`` picks that pass before any parse: the body is the first
//! start tag named ``push-update`` or ``push-change-update`` (any prefix), and the pass's
//! framing reads the body itself (a push-update misjudged a yang-patch gets None).
//!
//! JSON needs no such scan any more: ``Decoder.keys`` keys a JSON yang-patch (patchwalk.rs)
//! and, with the instance feed on, writes its feed (feed.rs), as ``Decoder.instances`` does;
//! the parse was once the whole cost of their None, which the scan answered before it.

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
