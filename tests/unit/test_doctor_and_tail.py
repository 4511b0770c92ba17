"""The pure parts of ``doctor`` and ``tail``: version ranges, an extra's requirements, how a
value is recognised and shown (the broker side is in tests/integration/test_inspection.py)."""

from __future__ import annotations

from yangkey.cli.extras import version_problem
from yangkey.inspection.doctor import Check, extra_requirements
from yangkey.inspection.tail import Decoded, Schemas, Shown, decode_value


def test_version_ranges() -> None:
    assert version_problem("pyspark", "4.2.0", ">=4.2") is None
    assert version_problem("pyspark", "3.5.1", ">=4.2") == (
        "pyspark 3.5.1 is installed, yangkey needs pyspark>=4.2"
    )
    assert version_problem("x", "1.13.1", ">=1.9,<2") is None
    # the floor first, as people write it, whatever order the metadata has
    assert version_problem("x", "2.0", "<2,>=1.9") == "x 2.0 is installed, yangkey needs x>=1.9,<2"
    assert version_problem("pyspark", "4.3.0.dev1", ">=4.2") is None
    assert version_problem("x", "7.1.0", "") is None


def test_extra_requirements_come_from_the_package_metadata() -> None:
    spark = dict(extra_requirements("spark"))
    # a floor and a ceiling, in the order the build backend writes them (<5,>=4.2)
    assert "pyspark" in spark and ">=4.2" in spark["pyspark"].split(",")
    assert "yangkey" not in spark  # included extras are checked on their own line
    assert extra_requirements("no-such-extra") == []


def test_check_line_has_status_name_detail_and_fix() -> None:
    line = Check("bootstrap", "fail", "127.0.0.1:1 does not answer", "yangkey kafka start").line(10)
    assert line == "fail  bootstrap  127.0.0.1:1 does not answer -> yangkey kafka start"


def test_values_are_recognised() -> None:
    none = Schemas(None)
    assert decode_value(b'{"a": [1, 2]}', none) == Decoded("json", {"a": [1, 2]})
    xml = decode_value(b"<a><b>1</b></a>", none)
    assert xml.kind == "xml" and xml.value == "<a>\n  <b>1</b>\n</a>"
    # a DTD is refused by the hardened parser: shown as text, never expanded
    doctype = b'<!DOCTYPE a [<!ENTITY e "x">]><a>&e;</a>'
    assert decode_value(doctype, none).kind == "text"
    assert decode_value(b"plain words", none) == Decoded("text", "plain words")
    assert decode_value(b"\x01\x02\xffz\\", none) == Decoded("bytes", "\\x01\\x02\\xffz\\\\")
    assert decode_value(b"", none).kind == "empty"
    assert decode_value(None, none).kind == "null"
    framed = decode_value(b"\x00\x00\x00\x01\x00" + b'{"n": 1}', none)
    assert (framed.kind, framed.value, framed.schema_id) == ("json", {"n": 1}, 256)
    assert framed.note == "no --schema-registry given"


def test_a_message_as_text_and_json() -> None:
    shown = Shown(
        topic="t",
        partition=2,
        offset=41,
        timestamp="2026-11-26T10:00:00.000Z",
        key="pe1\n1042\n/a:b",
        headers=[("content-type", "application/yang-data+json"), ("x", None)],
        value=Decoded("json", {"a": 1}),
    )
    assert shown.as_text().splitlines() == [
        "── t [2] @41  2026-11-26T10:00:00.000Z",
        "key:     pe1\\n1042\\n/a:b",
        "headers: content-type=application/yang-data+json",
        "         x=",
        "value:   json",
        "{",
        '  "a": 1',
        "}",
    ]
    record = shown.as_json()
    assert record["key"] == "pe1\n1042\n/a:b" and record["value"] == {"a": 1}
    assert "schema_id" not in record
