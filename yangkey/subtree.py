"""Phase 1: a subtree filter (RFC 6241 section 6) normalized to an XPath union.

Draft section 3.1.2.1. Each element is classified by RFC 6241 section 6.2:

* **content match**: non-whitespace text and no child elements -> a predicate
  ``[module:leaf='value']`` on the parent step (text stripped of surrounding whitespace);
* **selection**: no children and no (or whitespace-only) text -> ends a branch;
* **containment**: child elements -> the path continues into each selection/containment child.

An element with only content-match children (or none) ends its branch there. Every step and
predicate carries the full module name; duplicate branches are dropped (first seen kept).
"""

from __future__ import annotations

from lxml import etree

from yangkey.errors import FilterError
from yangkey.modules import ModuleIndex
from yangkey.xmlsafe import local_name, namespace, parse_xml
from yangkey.xpath import quote

_NETCONF_BASE = "urn:ietf:params:xml:ns:netconf:base:1.0"


def _module(element: etree._Element, index: ModuleIndex, source: str) -> str:
    ns = namespace(element)
    if ns is None:
        raise FilterError(
            f"element <{local_name(element)}> has no namespace: subtree filters must declare the "
            "YANG module namespace (xmlns or a prefix)",
            source=source,
            position=None,
        )
    try:
        return index.module_for_namespace(ns)
    except Exception as exc:  # SchemaError: re-raised as a filter error naming the element
        raise FilterError(
            f"element <{local_name(element)}>: unknown namespace {ns!r} "
            "(no YANG module in the search path implements it)",
            source=source,
        ) from exc


def _is_content_match(element: etree._Element) -> bool:
    return len(element) == 0 and bool((element.text or "").strip())


def _reject_attributes(element: etree._Element, source: str) -> None:
    if element.attrib:
        names = ", ".join(etree.QName(a).localname for a in element.attrib)
        raise FilterError(
            f"attribute-match expressions are not supported (<{local_name(element)}> has "
            f"attribute {names}); use a content-match child element instead",
            source=source,
        )


def _branches(
    element: etree._Element, prefix_path: str, index: ModuleIndex, source: str, out: list[str]
) -> None:
    _reject_attributes(element, source)
    module = _module(element, index, source)
    step = f"{prefix_path}/{module}:{local_name(element)}"
    predicates: list[str] = []
    continuing: list[etree._Element] = []
    for child in element:
        if not isinstance(child.tag, str):
            continue
        if _is_content_match(child):
            _reject_attributes(child, source)
            child_module = _module(child, index, source)
            value = (child.text or "").strip()
            predicates.append(f"[{child_module}:{local_name(child)}={quote(value)}]")
        else:
            continuing.append(child)
    step += "".join(predicates)
    if not continuing:
        out.append(step)
        return
    for child in continuing:
        _branches(child, step, index, source, out)


def normalize_subtree(filter_xml: str | bytes, index: ModuleIndex, source: str = "subtree") -> str:
    """Subtree filter XML -> the XPath union string (branches joined with ``" | "``)."""
    root = parse_xml(filter_xml, source)
    tops: list[etree._Element]
    if local_name(root) == "filter" and namespace(root) in (None, _NETCONF_BASE):
        # The <filter type="subtree"> wrapper's attributes belong to NETCONF, not to the filter.
        tops = [child for child in root if isinstance(child.tag, str)]
    else:
        tops = [root]
    branches: list[str] = []
    for top in tops:
        if _is_content_match(top):
            raise FilterError(
                f"top-level element <{local_name(top)}> is a content match; a subtree filter "
                "must start with a container, list or leaf selection",
                source=source,
            )
        _branches(top, "", index, source, branches)
    unique = list(dict.fromkeys(branches))
    if not unique:
        raise FilterError("the subtree filter selects nothing (empty filter)", source=source)
    return " | ".join(unique)
