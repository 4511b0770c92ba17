"""Issue 33: an XML yang-patch's edit values read in place (native/src/patcharena.rs) against
the Python reference.

The key pass reads each edit's value in the fast XML reader's arena, as the tape
``XmlConverter.members`` would make of it (members qualified where their module changes, the
elements of one name an array, an element with children an object, any other its text); a
read it leaves to the tape (a walk below the target, a key or filter value a Python converter
canonicalizes, the instance feed) writes the tape and walks it. Here: the reads made in place
(the value's list member, its one entry, the entry's keys given plainly, in another
namespace, with child elements, as integers spelled otherwise; a data filter on the entry)
and the reads left to the tape, each answered as the reference answers (and natively where
named), in two framings.

Skipped when yangkey-native is not installed (``make native`` builds it).
"""

from __future__ import annotations

from typing import Any

import pytest
from native_helpers import reference, same
from test_native_patch_xml import IF, NS_IF, deriver_of, entry, xml_change

from yangkey.schema import SchemaContext

pytest.importorskip("yangkey_native", reason="yangkey-native not installed")

NS_YKT = "urn:example:yangkey:yk-test"
RACKS = "/yk-test:top/site/rack"


def merge(target: str, value: str) -> str:
    return (
        f"<edit><operation>merge</operation><target>{target}</target>"
        f"<value>{value}</value></edit>"
    )


def rack(body: str) -> str:
    return f'<rack xmlns="{NS_YKT}">{body}</rack>'


# (subscription, edits, who answers when the reference keys it: native, python, or either)
ARENA: list[tuple[str, str, str]] = [
    # the key given in another namespace is another member ({urn:x}:name): not checked
    (IF, merge(f"{IF}=eth0", entry("eth9").replace("<name>", '<name xmlns="urn:x">')),
     "native"),
    # the key given in the module's namespace by a prefix: the same member, checked
    (IF, merge(f"{IF}=eth0", f'<i:interface xmlns:i="{NS_IF}"><i:name>eth0</i:name>'
                            "</i:interface>"), "native"),
    (IF, merge(f"{IF}=eth0", f'<i:interface xmlns:i="{NS_IF}"><i:name>eth1</i:name>'
                            "</i:interface>"), "python"),
    # the value's list member in another namespace, or unqualified: not the list's
    (IF, merge(f"{IF}=eth0", '<interface xmlns="urn:x"><name>eth9</name></interface>'),
     "native"),
    (IF, merge(f"{IF}=eth0", "<interface><name>eth9</name></interface>"), "native"),
    # the key with a child element (an object), given twice (an array), empty
    (IF, merge(f"{IF}=eth0", entry("<x>eth0</x>")), "python"),
    (IF, merge(f"{IF}=eth0", f'<interface xmlns="{NS_IF}"><name>eth0</name><name>eth0</name>'
                            "</interface>"), "python"),
    (IF, merge(f"{IF}=eth0", f'<interface xmlns="{NS_IF}"><name/></interface>'), "python"),
    # entries: one among texts, two (refused), none but text
    (IF, merge(f"{IF}=eth0", f'<interface xmlns="{NS_IF}">x</interface>{entry("eth0")}'),
     "native"),
    (IF, merge(f"{IF}=eth0", f'<interface xmlns="{NS_IF}">x</interface>'
                            f'<interface xmlns="{NS_IF}">y</interface>'), "native"),
    (IF, merge(f"{IF}=eth0", entry("eth0") + entry("eth1")), "python"),
    # names of other lengths around the key (the length filter); the key again by a prefix
    # of its own namespace: the same member, twice
    (IF, merge(f"{IF}=eth0", entry("eth0", "<nam>x</nam><names>y</names><n>z</n>")),
     "native"),
    (IF, merge(f"{IF}=eth0", entry("eth0", f'<ietf-interfaces:name xmlns:ietf-interfaces="{NS_IF}"'
                                           ">eth0</ietf-interfaces:name>")), "python"),
    # an integer key spelled otherwise: equal once canonical; another number: refused
    (RACKS, merge("/yk-test:top/site=paris/rack=42", rack("<id>+042</id>")), "native"),
    (RACKS, merge("/yk-test:top/site=paris/rack=42", rack("<id> 42 </id>")), "native"),
    (RACKS, merge("/yk-test:top/site=paris/rack=42", rack("<id>43</id>")), "python"),
    (RACKS, merge("/yk-test:top/site=paris/rack=42", rack("<id>4x</id>")), "python"),
    # a data filter on the entry: its value read in place (text, missing, twice, object)
    (f"{IF}[description='d']",
     merge(f"{IF}=eth0", entry("eth0", "<description>d</description>"))
     + merge(f"{IF}=eth1", entry("eth1", "<description>e</description>"))
     + merge(f"{IF}=eth2", entry("eth2")), "native"),
    (f"{IF}[description='d']",
     merge(f"{IF}=eth0", entry("eth0", "<description>d</description><description>d"
                                       "</description>")), "either"),
    (f"{IF}[description='d']",
     merge(f"{IF}=eth0", entry("eth0", "<description><x/></description>")), "either"),
    (f"{RACKS}[descr='a']",
     merge("/yk-test:top/site=paris/rack=1", rack("<id>1</id><descr>a</descr>"))
     + merge("/yk-test:top/site=paris/rack=2", rack("<id>2</id><descr>b</descr>")), "native"),
    # left to the tape: a walk below the target (the site's racks), a converter's key
    # (identityref), the same edits with a value read in place before them
    (RACKS, merge("/yk-test:top/site=paris",
                  f'<site xmlns="{NS_YKT}"><name>paris</name>{rack("<id>7</id>")}'
                  f'{rack("<id>8</id>")}</site>'), "native"),
    (RACKS, merge("/yk-test:top/site=paris/rack=42", rack("<id>42</id>"))
     + merge("/yk-test:top/site=lyon", f'<site xmlns="{NS_YKT}"><name>lyon</name>'
                                       f'{rack("<id>9</id>")}</site>'), "native"),
    ("/yk-test:top/flow",
     merge("/yk-test:top/flow=yk-test%3Atcp,80,true",
           f'<flow xmlns="{NS_YKT}" xmlns:t="{NS_YKT}"><proto>t:tcp</proto><port>80</port>'
           "<enabled>true</enabled></flow>"), "native"),
    # the value's entry refused before a read left to the tape: the reference's refusal
    (RACKS, merge("/yk-test:top/site=paris/rack=42", rack("<id>43</id>"))
     + merge("/yk-test:top/site=lyon", f'<site xmlns="{NS_YKT}"><name>lyon</name>'
                                       f'{rack("<id>9</id>")}</site>'), "python"),
]


@pytest.mark.parametrize(("text", "edits", "who"), ARENA)
@pytest.mark.parametrize("framing", ["netconf", "telemetry"])
def test_native_patch_arena(
    decoder: Any, fx_schema: SchemaContext, text: str, edits: str, who: str, framing: str
) -> None:
    """The native answer is the reference's, from the side named where the reference keys
    the notification (a refusal of the reference: always the reference's)."""
    deriver = deriver_of(text, fx_schema)
    ns = fx_schema.index.by_namespace
    raw = xml_change(edits, framing)
    answered = same(decoder, deriver, raw, ns, "dflt", "keys_xml")
    if reference(deriver, raw, ns, "dflt")[0] != "ok":
        assert answered == "python" and who in ("python", "either"), raw
    elif who != "either":
        assert answered == who, raw
