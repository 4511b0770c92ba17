//! The hardened XML parse of yangkey_native: roxmltree (no DTD, no entity but the five
//! predefined and character references, UTF-8 only), with the limits and checks that keep it
//! no more lenient than the reference's libxml2 (xmlsafe.py); a document past them goes to the
//! reference. And the element text as lxml gives it.

use roxmltree::{Document, Node, ParsingOptions};
use std::borrow::Cow;

/// libxml2 without XML_PARSE_HUGE refuses text over 10,000,000 bytes and names over 50,000;
/// such documents (and deeper ones) go to the reference, which words the refusal.
const MAX_DOCUMENT: usize = 10_000_000;
const MAX_NAME: usize = 50_000;
const MAX_DEPTH: usize = 128;

/// Parse ``text`` with the hardened settings; None: the reference takes it.
pub fn parse(text: &str) -> Option<Document<'_>> {
    if text.len() > MAX_DOCUMENT {
        return None;
    }
    if declared_encoding_not_utf8(text) || lenient_spot(text.as_bytes()) {
        return None;
    }
    let options = ParsingOptions {
        allow_dtd: false,
        ..ParsingOptions::default()
    };
    let doc = Document::parse_with_options(text, options).ok()?;
    // Depth by node id: a parent comes before its children in document order.
    let mut depths = vec![0u16; doc.descendants().count() + 1];
    // Namespace names are stored once per declaration: checked once each (by address).
    let mut checked: Vec<*const u8> = Vec::new();
    for node in doc.descendants().filter(|n| n.is_element()) {
        for ns in node.namespaces() {
            let uri = ns.uri();
            // libxml2: "xmlns:p: Empty XML namespace is not allowed" (Namespaces in XML 1.0
            // section 3; roxmltree takes it).
            if uri.is_empty() && ns.name().is_some() {
                return None;
            }
            if !checked.contains(&uri.as_ptr()) {
                if !plain_uri(uri) {
                    return None;
                }
                checked.push(uri.as_ptr());
            }
        }
        let parent = node.parent().map_or(0, |p| depths[p.id().get_usize()]);
        let depth = parent + 1;
        if depth as usize > MAX_DEPTH
            || node.tag_name().name().len() > MAX_NAME
            || node.attributes().any(|a| a.name().len() > MAX_NAME)
        {
            return None;
        }
        depths[node.id().get_usize()] = depth;
    }
    Some(doc)
}

/// What roxmltree reads and libxml2 refuses, found without parsing: a character reference to
/// a surrogate (roxmltree makes it U+FFFD; libxml2: "invalid xmlChar value") and a name with an
/// empty prefix in a tag (`<:a>`, `<a :b="1">`; libxml2: "Failed to parse QName"). Comments,
/// CDATA sections and processing instructions are skipped whole (a quote in them opens no
/// attribute value); a document whose markup the scan misjudges only goes to the reference.
fn lenient_spot(bytes: &[u8]) -> bool {
    let mut at = 0;
    let mut in_tag = false;
    let mut quote = 0u8;
    let mut previous = 0u8;
    while at < bytes.len() {
        let byte = bytes[at];
        if quote != 0 {
            if byte == quote {
                quote = 0;
            }
        } else if in_tag {
            match byte {
                b'"' | b'\'' => quote = byte,
                b'>' => in_tag = false,
                b':' if matches!(previous, b'<' | b'/' | b' ' | b'\t' | b'\r' | b'\n') => {
                    return true;
                }
                _ => {}
            }
        } else if byte == b'<' {
            let rest = &bytes[at..];
            let end = [
                (&b"<!--"[..], &b"-->"[..]),
                (b"<![CDATA[", b"]]>"),
                (b"<?", b"?>"),
            ]
            .iter()
            .find(|(open, _)| rest.starts_with(open))
            .map(|(open, close)| {
                memchr::memmem::find(&rest[open.len()..], close)
                    .map_or(bytes.len(), |found| at + open.len() + found + close.len())
            });
            if let Some(end) = end {
                at = end;
                previous = b'>';
                continue;
            }
            in_tag = true;
        }
        if byte == b'&' && bytes.get(at + 1) == Some(&b'#') && surrogate_reference(&bytes[at + 2..])
        {
            return true;
        }
        previous = byte;
        at += 1;
    }
    false
}

/// The digits after `&#` (`x` and hex, or decimal) name a UTF-16 surrogate.
fn surrogate_reference(rest: &[u8]) -> bool {
    let (digits, radix) = match rest.first() {
        Some(b'x') => (&rest[1..], 16),
        _ => (rest, 10),
    };
    // Surrogates have at most 5 decimal digits; a longer reference is no surrogate (looking
    // no further keeps the scan linear).
    let Some(end) = digits.iter().take(8).position(|b| *b == b';') else {
        return false;
    };
    std::str::from_utf8(&digits[..end])
        .ok()
        .and_then(|text| u32::from_str_radix(text, radix).ok())
        .is_some_and(|code| (0xD800..=0xDFFF).contains(&code))
}

/// A namespace name libxml2 takes as a URI for sure (RFC 3986): a scheme before any ':',
/// unreserved and sub-delimiter characters, '/', '?', one '#', '%' starting an escape.
/// libxml2 refuses others ("xmlns: '...' is not a valid URI"), so anything else goes to the
/// reference, which decides.
pub fn plain_uri(uri: &str) -> bool {
    let bytes = uri.as_bytes();
    // A ':' before any '/', '?' or '#' ends a scheme (else a relative reference's first
    // segment would hold it, which RFC 3986 does not allow).
    if let Some(end) = uri.find([':', '/', '?', '#']) {
        let scheme = &bytes[..end];
        let valid = scheme.first().is_some_and(u8::is_ascii_alphabetic)
            && scheme
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(b));
        if bytes[end] == b':' && !valid {
            return false;
        }
    }
    bytes.iter().filter(|b| **b == b'#').count() <= 1
        && bytes.iter().enumerate().all(|(i, b)| match b {
            b'%' => bytes
                .get(i + 1..i + 3)
                .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)),
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' => true,
            _ => b"-._~:/?#@!$&'()*+,;=".contains(b),
        })
}

/// An XML declaration naming an encoding other than UTF-8: libxml2 decodes by it.
fn declared_encoding_not_utf8(text: &str) -> bool {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if !text.starts_with("<?xml") {
        return false;
    }
    let Some(end) = text.find("?>") else {
        return false;
    };
    let declaration = &text[..end];
    let Some(at) = declaration.find("encoding") else {
        return false;
    };
    let rest = declaration[at + "encoding".len()..].trim_start();
    let Some(rest) = rest.strip_prefix('=') else {
        return true;
    };
    let rest = rest.trim_start();
    let value = rest.trim_start_matches(['"', '\'']);
    let value: String = value
        .chars()
        .take_while(|c| *c != '"' && *c != '\'')
        .collect();
    !value.eq_ignore_ascii_case("utf-8")
}

/// ``element.text`` as lxml gives it with comments and PIs removed: the text before the first
/// child element ("" for none).
pub fn text<'a>(node: Node<'a, '_>) -> Cow<'a, str> {
    let mut result: Option<Cow<'a, str>> = None;
    for child in node.children() {
        if child.is_element() {
            break;
        }
        if child.is_text() {
            let piece = child.text().unwrap_or("");
            result = Some(match result {
                None => Cow::Borrowed(piece),
                Some(mut joined) => {
                    joined.to_mut().push_str(piece);
                    joined
                }
            });
        }
    }
    result.unwrap_or(Cow::Borrowed(""))
}

pub fn has_element_child(node: Node<'_, '_>) -> bool {
    node.children().any(|c| c.is_element())
}

pub fn elements<'a, 'i>(node: Node<'a, 'i>) -> impl Iterator<Item = Node<'a, 'i>> {
    node.children().filter(|c| c.is_element())
}

/// ``_parse_fragment``'s text: stripped (ASCII whitespace, as bytes.strip), an XML
/// declaration dropped, under the ``yangkey-contents`` wrapper.
pub fn fragment(text: &str) -> String {
    let mut stripped =
        text.trim_matches(|c: char| matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0b' | '\x0c'));
    if stripped.starts_with("<?xml") {
        if let Some(end) = stripped.find("?>") {
            stripped = &stripped[end + 2..];
        }
    }
    format!("<yangkey-contents>{stripped}</yangkey-contents>")
}
