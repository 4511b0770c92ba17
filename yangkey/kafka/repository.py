"""Which Maven repository the broker's jars are downloaded from: the one the machine's Maven
clients use.

yangkey does not carry a repository address of its own; it asks, in order:

1. ``$YANGKEY_MAVEN_REPOSITORY``: a repository of Maven's layout (a mirror, a proxy, a
   ``file://`` directory);
2. Maven's user settings (``~/.m2/settings.xml``, or ``$M2_HOME/conf/settings.xml``): the
   ``<mirror>`` standing for ``central`` (``<mirrorOf>central</mirrorOf>`` or ``*``), as a
   company configures its proxy;
3. Maven's own default, Maven Central, read from the installed Maven (``mvn`` on the PATH: the
   super POM inside its ``maven-model-builder`` jar);
4. Apache Ivy's default, Maven Central, read from the Ivy jar inside pyspark (the ``spark``
   extra), without starting a JVM.

The files are read as data (zip members, XML without DTDs or entities); nothing is run.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import zipfile
from dataclasses import dataclass
from pathlib import Path

REPOSITORY_ENV = "YANGKEY_MAVEN_REPOSITORY"

_SUPER_POM = "org/apache/maven/model/pom-4.0.0.xml"
_IVY_RESOLVER = "org/apache/ivy/plugins/resolver/IBiblioResolver.class"
#: Ivy's default Maven 2 root is a string constant of its resolver class.
_IVY_M2_ROOT = re.compile(rb"https://[\x21-\x7e]+?/maven2/")
_NAMESPACE = re.compile(r"^\{[^}]*\}")

WHERE_TO_GET_ONE = (
    f"set {REPOSITORY_ENV} to a Maven repository URL (Maven Central or a mirror of it), or"
    " install Maven (apt-get install maven: yangkey reads the repository from its settings)"
)


@dataclass(frozen=True)
class Repository:
    """A Maven repository (its root URL) and where yangkey learned of it."""

    url: str
    origin: str

    def describe(self) -> str:
        return f"{self.url} ({self.origin})"


def find_repository() -> Repository | None:
    """The repository to download from (see the module's docstring), or None."""
    named = os.environ.get(REPOSITORY_ENV, "").strip()
    if named:
        return Repository(named, f"${REPOSITORY_ENV}")
    for found in (_settings_mirror(), _maven_default(), _ivy_default()):
        if found is not None:
            return found
    return None


def _elements(data: bytes, tag: str) -> list[dict[str, str]]:
    """Every ``tag`` element of the XML ``data`` (namespaces ignored) as its children's texts
    by local name; none when ``data`` is not well-formed. Entities, DTDs and network off."""
    from lxml import etree  # noqa: PLC0415

    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError:
        return []
    return [
        {_local(child.tag): (child.text or "").strip() for child in element}
        for element in root.iter()
        if _local(element.tag) == tag
    ]


def _local(tag: object) -> str:
    return _NAMESPACE.sub("", tag) if isinstance(tag, str) else ""


def _settings_files() -> list[Path]:
    files = [Path.home() / ".m2" / "settings.xml"]
    for variable in ("M2_HOME", "MAVEN_HOME"):
        home = os.environ.get(variable)
        if home:
            files.append(Path(home) / "conf" / "settings.xml")
    return files


def _settings_mirror() -> Repository | None:
    """The ``<mirror>`` of Maven's settings that stands for ``central``."""
    for path in _settings_files():
        try:
            data = path.read_bytes()
        except OSError:
            continue
        for fields in _elements(data, "mirror"):
            covers = {part.strip() for part in fields.get("mirrorOf", "").split(",")}
            if fields.get("url") and covers & {"central", "*", "external:*"}:
                return Repository(fields["url"], f"the mirror of central in {path}")
    return None


def _maven_default() -> Repository | None:
    """Maven Central as the installed Maven's super POM names it."""
    mvn = shutil.which("mvn")
    if mvn is None:
        return None
    lib = Path(mvn).resolve().parent.parent / "lib"
    for jar in sorted(lib.glob("maven-model-builder*.jar")):
        try:
            with zipfile.ZipFile(jar) as archive:
                data = archive.read(_SUPER_POM)
        except (OSError, KeyError, zipfile.BadZipFile):
            continue
        for fields in _elements(data, "repository"):
            if fields.get("id") == "central" and fields.get("url"):
                return Repository(fields["url"], f"Maven Central, as the Maven at {mvn} names it")
    return None


def _ivy_default() -> Repository | None:
    """Maven Central as the Apache Ivy inside pyspark names it."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.origin:
        return None
    for jar in sorted((Path(spec.origin).parent / "jars").glob("ivy-*.jar"), reverse=True):
        try:
            with zipfile.ZipFile(jar) as archive:
                match = _IVY_M2_ROOT.search(archive.read(_IVY_RESOLVER))
        except (OSError, KeyError, zipfile.BadZipFile):
            continue
        if match is not None:
            return Repository(
                match.group().decode("ascii"), f"Maven Central, as the Apache Ivy in {jar} names it"
            )
    return None
