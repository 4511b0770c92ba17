"""Issue 14.4 / 16.1: what ships in the wheel, and ``yangkey init``."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import click
import pytest
from cli_helpers import assert_one_error, run

from yangkey.catalog import load_catalog
from yangkey.cli import main
from yangkey.demo.pipeline import example_subscriptions

REPO = Path(__file__).resolve().parents[2]


def test_every_package_under_yangkey_ships() -> None:
    # The package list is explicit (two directories are mapped in): a new subpackage that is
    # not listed would be missing from the wheel while every test in the clone passes.
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(config["tool"]["setuptools"]["packages"])
    found = {
        ".".join(init.parent.relative_to(REPO).parts)
        for init in REPO.glob("yangkey/**/__init__.py")
    }
    assert found <= listed, found - listed
    for package, directory in config["tool"]["setuptools"]["package-dir"].items():
        assert package in listed
        assert (REPO / directory / "__init__.py").is_file()


def test_the_example_subscriptions_ship_and_compile() -> None:
    with example_subscriptions() as path:
        assert path.read_bytes() == (REPO / "examples" / "subscriptions.yaml").read_bytes()
        catalog = load_catalog(path)
    assert {entry.id for entry in catalog.entries} == {1042, 1043, 1100, 3001, 2001, 2002}


def test_init_writes_a_starter_and_the_next_commands(tmp_path: Path) -> None:
    target = tmp_path / "telemetry"
    result = run("init", str(target))
    assert result.exit_code == 0, result.output
    written = target / "subscriptions.yaml"
    assert written.read_text(encoding="utf-8").startswith("# Example subscriptions")
    assert len(load_catalog(written).entries) == 6
    assert f"yangkey demo --subscriptions {written}" in result.stdout
    assert f"yangkey catalog show --subscriptions {written}" in result.stdout


@pytest.mark.chdb  # parsing `yangkey state` with the CLI loads the ClickHouse edge
def test_init_leads_all_the_way_to_current_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every command ``init`` prints is one the CLI takes as written (its options parse, its
    files exist by then), and they end at ``state`` and ``history`` of the embedded ClickHouse
    that ``ingest`` fills: a newcomer reaches current state by copying them."""
    for module in ("pyspark", "confluent_kafka", "chdb"):
        pytest.importorskip(module)  # the edges' commands parse only where they import
    monkeypatch.chdir(tmp_path)
    result = run("init")
    assert result.exit_code == 0, result.output
    lines = [
        line.strip() for line in result.stdout.split("next:\n", 1)[1].splitlines() if line.strip()
    ]
    commands = []
    for line in lines:
        words = shlex.split(line, comments=True)
        if not words:
            continue
        if words[0].startswith("BOOTSTRAP=$("):  # BOOTSTRAP=$(yangkey kafka start)
            words = shlex.split(line.split("$(", 1)[1].split(")", 1)[0])
        assert words[0] == "yangkey", line
        commands.append(words[1:])
    names = [words[0] for words in commands]
    assert names[-4:] == ["ingest", "state", "history", "kafka"], names
    ingest = commands[names.index("ingest")]
    store = ingest[ingest.index("--embedded") + 1]
    for words in commands[-3:-1]:
        assert words[words.index("--embedded") + 1] == store
    for words in commands:
        if words[0] == "sample":  # writes the notifications the later commands read
            assert run(*words).exit_code == 0
            continue
        command: click.Command = main
        context = main.make_context("yangkey", [*words[:1], "--help"], resilient_parsing=True)
        args = list(words)
        while isinstance(command, click.Group):
            found = command.get_command(context, args.pop(0))
            assert found is not None, words
            command = found
        with command.make_context(command.name, args) as parsed:  # raises on a bad option
            assert parsed.params


def test_init_keeps_an_existing_file(tmp_path: Path) -> None:
    (tmp_path / "subscriptions.yaml").write_text("mine\n", encoding="utf-8")
    assert_one_error(run("init", str(tmp_path)), "subscriptions.yaml", "--force")
    assert (tmp_path / "subscriptions.yaml").read_text(encoding="utf-8") == "mine\n"
    assert run("init", "--force", str(tmp_path)).exit_code == 0
    assert (tmp_path / "subscriptions.yaml").read_text(encoding="utf-8") != "mine\n"


def test_every_design_citation_in_the_code_resolves() -> None:
    # Comments cite docs/design.md#section for the reason behind a rule; a renamed heading or
    # a mistyped anchor would leave a reader at a dead end.
    design = (REPO / "docs" / "design.md").read_text(encoding="utf-8")
    anchors = {
        re.sub(r"[^a-z0-9 -]", "", heading.lower()).replace(" ", "-")
        for heading in re.findall(r"^## (.+)$", design, re.MULTILINE)
    }
    cited = [
        (path.name, anchor)
        for path in (REPO / "yangkey").rglob("*.py")
        for anchor in re.findall(r"docs/design\.md#([a-z0-9-]+)", path.read_text(encoding="utf-8"))
    ]
    assert len(cited) >= 10
    assert [c for c in cited if c[1] not in anchors] == []
    assert not [p for p in (REPO / "yangkey").rglob("*.py") if "SPEC" in p.read_text("utf-8")]


def test_produce_help_names_the_spark_submit_entry_this_installation_ships() -> None:
    """A pip user has no clone: the spark-submit entry is a module of the package
    (``yangkey/cli/spark_submit.py``, in the wheel with its package) and ``produce --help``
    prints where it is installed (spark-submit takes a file, not a module name)."""
    pytest.importorskip("pyspark")
    from yangkey.cli import spark_submit as submit  # noqa: PLC0415

    result = run("produce", "--help")
    assert result.exit_code == 0
    entry = Path(submit.__file__)
    assert entry.is_file() and f"spark-submit --master yarn {entry} " in result.stdout
    assert "spark_jobs" not in result.stdout


def test_the_clones_spark_submit_entry_is_the_produce_command() -> None:
    """``spark_jobs/produce_keyed.py`` (the clone's entry) takes produce's options, like the
    shipped ``yangkey/cli/spark_submit.py``."""
    pytest.importorskip("pyspark")
    entry = REPO / "spark_jobs" / "produce_keyed.py"
    done = subprocess.run(
        [sys.executable, str(entry), "--help"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "--subscriptions" in done.stdout and "--bootstrap" in done.stdout
