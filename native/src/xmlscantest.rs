//! xmlfast.rs's arena against roxmltree's tree (the full parser's, xmlparse.rs) for the same
//! documents: element by element the local name, the namespace, the text before the first
//! child, a ``prefix:name`` text's namespace in scope, and the children in order. The keys
//! cannot show a wrong arena: where the fast reader's framing fails, the full parser answers
//! the same keys (only slower).

use super::{parse, Fast, NONE};
use roxmltree::Node;

const OTHER: &str = "urn:example:other";
const IANA: &str = "urn:ietf:params:xml:ns:yang:iana-if-type";

fn same_tree(fast: &Fast<'_>, el: u32, node: Node<'_, '_>, doc: &str) {
    let name = node.tag_name();
    assert_eq!(fast.local(el), name.name(), "{doc}");
    let ns = fast.namespaces[fast.els[el as usize].ns as usize];
    assert_eq!(ns, name.namespace().unwrap_or(""), "{doc}");
    let text = fast.text(el);
    assert_eq!(text, crate::xmlparse::text(node), "{doc}");
    let leaf = fast.els[el as usize].first == NONE;
    if let (true, Some((prefix, _))) = (leaf, text.split_once(':')) {
        let expected = node.lookup_namespace_uri(Some(prefix));
        let found = fast.qname(el);
        let found = (found != NONE).then(|| fast.namespaces[found as usize]);
        assert_eq!(found, expected, "{doc}: {text}");
    }
    let children: Vec<u32> = fast.children(el).collect();
    let nodes: Vec<Node<'_, '_>> = node.children().filter(|n| n.is_element()).collect();
    assert_eq!(children.len(), nodes.len(), "{doc}");
    for (child, node) in children.into_iter().zip(nodes) {
        same_tree(fast, child, node, doc);
    }
}

fn check(doc: &str) {
    let tree = roxmltree::Document::parse(doc).expect(doc);
    let Ok(fast) = parse(doc) else {
        panic!("the fast reader refused {doc}");
    };
    same_tree(&fast, 0, tree.root_element(), doc);
}

/// Children of every kind: leaves, empty elements, containers, with and without attributes,
/// declarations on a leaf, an empty element, a container; the default namespace changed.
fn kinds() -> Vec<String> {
    vec![
        "<l>1</l>".into(),
        "<e/>".into(),
        "<c><l>2</l><e/></c>".into(),
        "<l a='1'>3</l>".into(),
        format!("<l xmlns:t=\"{OTHER}\">t:x</l>"),
        format!("<e xmlns:t=\"{OTHER}\"/>"),
        format!("<c xmlns:t=\"{OTHER}\"><l>t:y</l></c>"),
        format!("<c xmlns=\"{OTHER}\"><l>t:z</l><c xmlns=\"{IANA}\"><l>t:w</l></c><l>4</l></c>"),
        "<c><c><l>5</l></c><l>t:v</l></c>".into(),
        "<l>t:u</l >".into(),
    ]
}

/// Documents of every kind of child before, between and after leaves, and names of 1..40
/// bytes; each small and padded past the size from which the reader memoises.
fn documents() -> Vec<String> {
    let mut out = Vec::new();
    for child in kinds() {
        out.push(format!(
            "<r xmlns=\"{IANA}\" xmlns:t=\"{IANA}\"><i xmlns:t=\"{IANA}\">{child}<n>a</n>\
             {child}{child}<k>t:k</k>{child}</i><i>{child}<k>t:k</k></i></r>"
        ));
    }
    let alphabet = b"abcdefghijklmnopqrstuvwxyz0123456789";
    for len in 1..=40 {
        let name: String = (0..len).map(|n| alphabet[n % 36] as char).collect();
        out.push(format!(
            "<r xmlns:t=\"{IANA}\"><{name}>t:a</{name}><{name}/><{name} a='1'>b</{name}>\
             <{name}><{name}>c</{name}></{name}><x>t:d</x></r>"
        ));
    }
    let pad: String = (0..100).map(|n| format!("<p>{n}</p>")).collect();
    let padded: Vec<String> = (out.iter())
        .map(|doc| {
            let at = doc.find('>').unwrap() + 1;
            format!("{}{pad}{pad}{pad}{}", &doc[..at], &doc[at..])
        })
        .collect();
    assert!(padded.iter().all(|doc| doc.len() >= super::MEMO_FROM));
    out.extend(padded);
    out
}

#[test]
fn arena_is_roxmltree_tree() {
    let docs = documents();
    for doc in docs.iter().chain(docs.iter().rev()) {
        check(doc);
        check(doc);
    }
}

/// The same start tags (attribute runs) in documents where their namespace names come in
/// another order, are declared before or not, redeclared, one byte apart.
#[test]
fn attribute_runs_across_documents() {
    let near = [format!("{IANA}x"), IANA[..IANA.len() - 1].to_string()];
    let runs = [
        format!(" xmlns:t=\"{IANA}\""),
        format!(" xmlns:t=\"{OTHER}\""),
        format!(" xmlns=\"{OTHER}\" xmlns:t=\"{IANA}\""),
        format!(" xmlns:t=\"{IANA}\" xmlns=\"{OTHER}\" xmlns:u=\"{OTHER}\""),
        format!(" xmlns:t=\"{}\"", near[0]),
        format!(" xmlns:t=\"{}\"", near[1]),
        format!(" xmlns:u=\"{IANA}\" xmlns:t=\"{}\" a='1'", near[0]),
    ];
    let mut docs = Vec::new();
    for (n, outer) in runs.iter().enumerate() {
        for inner in &runs {
            let leaf = format!("<l{inner}>t:a</l><e{inner}/><l>t:b</l>");
            let tail = &runs[(n + 3) % runs.len()];
            docs.push(format!(
                "<r{outer}><c{inner}>{leaf}<c{inner}><l>u:c</l></c></c><l>t:d</l>\
                 <c{tail}><l>t:e</l></c></r>"
            ));
        }
    }
    for doc in docs.iter().chain(docs.iter().rev()) {
        check(doc);
    }
}

thread_local! {
    /// Whether start tags are read through [`super::chars::element32`]'s window (off: the
    /// name, then the text, one scan after the other, as before it).
    pub(super) static WINDOW: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
}

/// ``doc`` read with the window and without: both refused, or the same arena (every
/// element's fields, the namespaces, the declarations), which is roxmltree's tree.
fn same_both_ways(doc: &str) -> bool {
    WINDOW.set(false);
    let general = parse(doc);
    WINDOW.set(true);
    let window = parse(doc);
    let (general, window) = match (general, window) {
        (Err(_), Err(_)) => return false,
        (Ok(general), Ok(window)) => (general, window),
        (general, _) => panic!(
            "taken only {}: {doc:?}",
            ["with", "without"][general.is_ok() as usize]
        ),
    };
    assert_eq!(general.els.len(), window.els.len(), "{doc:?}");
    for (n, (a, b)) in general.els.iter().zip(&window.els).enumerate() {
        let el = n as u32;
        assert_eq!(
            (a.local, a.ns, a.first, a.next, a.scope_colon),
            (b.local, b.ns, b.first, b.next, b.scope_colon),
            "{doc:?} element {n}"
        );
        assert_eq!(general.text(el), window.text(el), "{doc:?} element {n}");
    }
    assert_eq!(general.namespaces, window.namespaces, "{doc:?}");
    let decls =
        |f: &Fast<'_>| -> Vec<_> { f.decls.iter().map(|d| (d.prefix, d.ns, d.up)).collect() };
    assert_eq!(decls(&general), decls(&window), "{doc:?}");
    let tree = roxmltree::Document::parse(doc).expect(doc);
    same_tree(&window, 0, tree.root_element(), doc);
    true
}

/// Texts with what the window must leave to the full scan (references, ']]>', CDATA, a
/// comment, a PI, controls, CR, U+FFFF) or may take (':', tab, line feed, '>', ']', U+FFFD,
/// non-ASCII), each at every place in a text of up to 40 bytes.
fn texts() -> Vec<String> {
    let marks = [
        "&amp;",
        "&#58;",
        "&bogus;",
        "&",
        "]]>",
        "]",
        "<![CDATA[c]]>",
        "<!--c-->",
        "<?pi x?>",
        ":",
        "\t",
        "\n",
        "\r",
        "\u{1}",
        "\u{FFFF}",
        "\u{FFFE}",
        "\u{FFFD}",
        "é",
        ">",
        "t:a",
        "\"'",
    ];
    let mut out: Vec<String> = (0..=40).map(|n| "x".repeat(n)).collect();
    for mark in marks {
        for at in [
            0, 1, 2, 5, 8, 12, 13, 14, 15, 16, 17, 18, 20, 25, 28, 29, 30, 31, 32, 33, 36,
        ] {
            out.push(format!(
                "{}{mark}{}",
                "y".repeat(at),
                "z".repeat(40 - at.min(40))
            ));
            out.push(format!("{}{mark}", "y".repeat(at)));
        }
    }
    out
}

/// Leaves, containers, empty elements and tags with attributes (both quotes, a '>' in a
/// value, white space, a prefix) of names 1..40 bytes long, after a padding of 0..32 bytes
/// (the window's place in the input), and each document cut at every length.
#[test]
fn window_is_the_general_reading() {
    let alphabet = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let names: Vec<String> = (1..=40)
        .map(|len| (0..len).map(|n| alphabet[n % 36] as char).collect())
        .chain(["a-b".into(), "a.b".into(), "a_b".into(), "a/b".into()])
        .collect();
    let texts = texts();
    let mut taken = 0;
    let mut count = 0;
    for pad in 0..=32 {
        let padding = format!("<p>{}</p>", "q".repeat(pad));
        for (n, name) in names.iter().enumerate() {
            let text = &texts[(n * 7 + pad) % texts.len()];
            let kinds = [
                format!("<{name}>{text}</{name}>"),
                format!("<{name}>{text}<c>t:v</c></{name}>"),
                format!("<{name}>{text}</{name}><n>t:w</n>"),
                format!("<{name}/><{name}>{text}</{name} >"),
                format!("<{name} a=\"1>2\">{text}</{name}>"),
                format!("<{name} a='1'>{text}</{name}><{name}\t>{text}</{name}>"),
                format!("<t:{name}>{text}</t:{name}><{name} xmlns:u=\"{OTHER}\">u:{text}</{name}>"),
                format!("<{name}>{text}</{name}x>"),
            ];
            for kind in &kinds {
                let doc = format!("<r xmlns:t=\"{IANA}\">{padding}{kind}<l>{text}</l></r>");
                count += 1;
                taken += same_both_ways(&doc) as usize;
                for cut in (0..doc.len()).filter(|&c| doc.is_char_boundary(c)) {
                    assert!(!same_both_ways(&doc[..cut]), "{doc:?} cut at {cut}");
                }
            }
        }
    }
    for text in &texts {
        for pad in 0..=32 {
            let doc = format!(
                "<r><p>{}</p><l>{text}</l><m>{text}</m></r>",
                "q".repeat(pad)
            );
            count += 1;
            taken += same_both_ways(&doc) as usize;
        }
    }
    // deep documents: the depth limit (128 open elements) with a window's leaf at the bottom
    for depth in [126, 127, 128, 129] {
        let doc = format!(
            "{}<l>t:x</l><m>{}</m>{}",
            "<d>".repeat(depth),
            "y".repeat(20),
            "</d>".repeat(depth)
        );
        count += 1;
        let read = same_both_ways(&doc);
        assert_eq!(read, depth < 128, "{depth}");
        taken += read as usize;
    }
    // both taken and refused documents in numbers
    assert!(taken > count / 3 && taken < count, "{taken} of {count}");
}
