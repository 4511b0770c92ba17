"""One set of CLI conventions: shared option names and env vars, flag > env > profile, output
that pipes (CliRunner's stdout is not a terminal), usage errors exit 2, ``yangkey sql``.

ClickHouse is the embedded chdb (one data path per process: every command closes its own).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import ipaddress
import json
import shutil
import tempfile
import uuid
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import click
import pytest
from cli_helpers import assert_one_error, run, write
from click.testing import CliRunner, Result

from yangkey.catalog import TopicSpec
from yangkey.cli import main
from yangkey.cli.options import resolve_format
from yangkey.cli.output import emit_rows
from yangkey.cli.profile import profile_defaults
from yangkey.clickhouse.apply import apply
from yangkey.clickhouse.connection import ChdbConnection
from yangkey.clickhouse.ddl import DdlOptions, render_ddl
from yangkey.clickhouse.ingest.arrow import insert_rows
from yangkey.clickhouse.ingest.rows import QueueRow
from yangkey.kafka.logs import quiet_librdkafka
from yangkey.messages import MessageKey

pytest.importorskip("chdb")

EXAMPLE = Path(__file__).parents[2] / "examples" / "subscriptions.yaml"
TOPIC = "netops-current-state-if-interfaces-interface"
NODE = "router-nyc-01"
ROWS = 5


def invoke(*args: str, env: dict[str, str] | None = None, input: str | None = None) -> Result:
    return CliRunner().invoke(main, list(args), env=env, input=input)


def stores(tmp_path: Path, *names: str) -> None:
    for name in names:
        (tmp_path / name).mkdir()


def opened(path: Path) -> bool:
    """Whether chdb has opened this (initially empty) data directory."""
    return any(path.iterdir())


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # The caller's own settings must not leak into what is being tested.
    for name in (
        "YANGKEY_BOOTSTRAP",
        "YANGKEY_CLICKHOUSE_URL",
        "YANGKEY_EMBEDDED",
        "YANGKEY_DATABASE",
        "YANGKEY_PROFILE",
        "YANGKEY_PROFILES_FILE",
        "YANGKEY_SUBSCRIPTIONS",
    ):
        monkeypatch.delenv(name, raising=False)
    # no user-level profiles file but the test's own (~/.config/yangkey/yangkey.yaml)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.chdir(tmp_path)


@pytest.fixture(scope="module")
def store() -> Iterator[str]:
    """An embedded store whose history holds ROWS messages of one key: a three-line key and
    a payload with a TAB, a LF and a backslash, so that every row tests the escaping."""
    with tempfile.TemporaryDirectory() as path:
        conn = ChdbConnection(path)
        try:
            spec = TopicSpec(
                name=TOPIC,
                schema_path="/x",
                subscription_ids=(1042,),
                subscription_type="on-change-sync",
                compaction=True,
                retention_seconds=0,
                partitions=1,
                replication_factor=1,
                templates=("/x",),
            )
            options = DdlOptions(database="yangkey", mode="embedded")
            apply(conn, render_ddl((spec,), options), "yangkey")
            xpath = "/ietf-interfaces:interfaces/interface[name='eth0']"
            key = MessageKey.of(NODE, 1042, [xpath]).encode()
            rows = [
                QueueRow(
                    topic=TOPIC,
                    partition=0,
                    offset=n,
                    key=key,
                    value=b'{"a":\t"x\\\\y",\n"n": %d}' % n,
                    headers=[
                        ("content-type", b"application/yang-data+json"),
                        ("yangkey-event-time", f"2026-11-20T10:00:0{n}Z".encode()),
                        ("yangkey-sequence-number", str(n).encode()),
                        ("yangkey-generation", b"1"),
                        ("yangkey-subscription-type", b"on-change-sync"),
                    ],
                    timestamp_ms=1_790_000_000_000,
                    error="",
                    raw_message=b"",
                )
                for n in range(ROWS)
            ]
            insert_rows(conn, "yangkey", TOPIC, rows)
        finally:
            conn.close()
        yield path


# ------------------------------------------------------------------ names and environment


@pytest.mark.parametrize(
    ("command", "needles"),
    [
        (["ingest"], ["-s, --subscriptions", "YANGKEY_SUBSCRIPTIONS", "-b, --bootstrap",
                      "YANGKEY_BOOTSTRAP", "YANGKEY_EMBEDDED", "-X, --consumer-config"]),
        (["state"], ["YANGKEY_CLICKHOUSE_URL", "YANGKEY_EMBEDDED", "--format", "YANGKEY_PROFILE"]),
        (["history"], ["YANGKEY_CLICKHOUSE_URL", "YANGKEY_EMBEDDED", "--format"]),
        (["sql"], ["YANGKEY_CLICKHOUSE_URL", "YANGKEY_EMBEDDED", "--format"]),
        (["catalog", "show"], ["-s, --subscriptions", "YANGKEY_SUBSCRIPTIONS", "--format"]),
        (["ddl", "apply"], ["-s, --subscriptions", "YANGKEY_CLICKHOUSE_URL"]),
    ],
)  # fmt: skip
def test_shared_options_have_one_name_and_show_their_env_var(
    command: list[str], needles: list[str]
) -> None:
    result = run(*command, "--help")
    assert result.exit_code == 0, result.output
    for needle in needles:
        assert needle in result.stdout, (command, needle)
    assert "--json" not in result.stdout  # the old spelling still works, hidden


def test_produce_names_them_like_ingest() -> None:
    pytest.importorskip("pyspark")
    result = run("produce", "--help")
    assert result.exit_code == 0, result.output
    for needle in ("-s, --subscriptions", "-b, --bootstrap", "YANGKEY_BOOTSTRAP",
                   "-X, --producer-config", "--format"):  # fmt: skip
        assert needle in result.stdout, needle


def test_explicit_embedded_wins_over_the_clickhouse_url_in_the_environment(
    tmp_path: Path,
) -> None:
    env = {"YANGKEY_CLICKHOUSE_URL": "http://default@127.0.0.1:1"}
    result = invoke("sql", "--embedded", str(tmp_path), "SELECT 41 + 1 AS answer", env=env)
    assert result.exit_code == 0, result.output
    assert result.stdout == "answer\n42\n"
    # and without the flag the environment is used (an unreachable server: one line)
    assert_one_error(invoke("sql", "SELECT 1", env=env), "127.0.0.1:1")


def test_embedded_from_the_environment(tmp_path: Path) -> None:
    env = {"YANGKEY_EMBEDDED": str(tmp_path)}
    result = invoke("sql", "SELECT 'env' AS via", env=env)
    assert (result.exit_code, result.stdout) == (0, "via\nenv\n"), result.output


def test_both_targets_from_the_same_place_is_a_usage_error(tmp_path: Path) -> None:
    result = run("sql", "--embedded", str(tmp_path), "--clickhouse", "http://h:8123", "SELECT 1")
    assert result.exit_code == 2, result.output
    assert "not both" in result.stderr


# ------------------------------------------------------------------------------ profiles

PROFILES = """\
profile: dev
profiles:
  dev:
    subscriptions: subs.yaml
    embedded: dev-db
  other:
    embedded: other-db
"""


def _profile_dir(tmp_path: Path, text: str = PROFILES) -> None:
    shutil.copy(EXAMPLE, tmp_path / "subs.yaml")
    write(tmp_path, "yangkey.yaml", text)


def test_profile_gives_the_defaults(tmp_path: Path) -> None:
    _profile_dir(tmp_path)
    stores(tmp_path, "dev-db")
    result = run("sql", "SELECT 1 AS one")
    assert (result.exit_code, result.stdout) == (0, "one\n1\n"), result.output
    assert opened(tmp_path / "dev-db")  # relative to the profile file
    shown = run("catalog", "show", "--format", "json")  # subscriptions from the profile
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["topics"]


@pytest.mark.parametrize(
    "how", [["--profile", "other", "sql"], ["sql", "--profile", "other"], ["env"]]
)
def test_profile_chosen_by_name(tmp_path: Path, how: list[str]) -> None:
    _profile_dir(tmp_path)
    stores(tmp_path, "dev-db", "other-db")
    if how == ["env"]:
        result = invoke("sql", "SELECT 1 AS one", env={"YANGKEY_PROFILE": "other"})
    else:
        result = run(*how, "SELECT 1 AS one")
    assert result.exit_code == 0, result.output
    assert opened(tmp_path / "other-db")
    assert not opened(tmp_path / "dev-db")


def test_env_beats_profile_and_flag_beats_env(tmp_path: Path) -> None:
    _profile_dir(tmp_path)
    stores(tmp_path, "dev-db", "env-db", "flag-db")
    env = {"YANGKEY_EMBEDDED": str(tmp_path / "env-db")}
    assert invoke("sql", "SELECT 1", env=env).exit_code == 0
    assert opened(tmp_path / "env-db") and not opened(tmp_path / "dev-db")
    # a server URL in the environment beats the profile's embedded path too
    server = {"YANGKEY_CLICKHOUSE_URL": "http://default@127.0.0.1:1"}
    assert_one_error(invoke("sql", "SELECT 1", env=server), "127.0.0.1:1")
    flag = invoke("sql", "--embedded", str(tmp_path / "flag-db"), "SELECT 1", env=env)
    assert flag.exit_code == 0 and opened(tmp_path / "flag-db")


@pytest.mark.parametrize(
    ("text", "needles"),
    [
        ("profiles:\n  dev:\n    bootstrapp: x\n", ["profiles.dev.bootstrapp", "Extra inputs"]),
        ("profiles:\n  dev:\n    embedded: a\n    clickhouse: http://h\n",
         ["profiles.dev", "not both"]),
        ("profiles: [1, 2]\n", ["profiles"]),
        ("profile: prod\nprofiles:\n  dev: {}\n", ["no profile 'prod'", "dev"]),
        ("profiles:\n  dev: {embedded: [\n", ["not valid YAML"]),
    ],
)  # fmt: skip
def test_bad_profile_file_is_one_line_naming_file_and_field(
    tmp_path: Path, text: str, needles: list[str]
) -> None:
    write(tmp_path, "yangkey.yaml", text)
    assert_one_error(run("sql", "SELECT 1"), "yangkey.yaml", *needles)


def test_profile_found_in_a_parent_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _profile_dir(tmp_path)
    stores(tmp_path, "dev-db")
    deeper = tmp_path / "a" / "b"
    deeper.mkdir(parents=True)
    monkeypatch.chdir(deeper)
    result = run("sql", "SELECT 1 AS one")
    assert (result.exit_code, result.stdout) == (0, "one\n1\n"), result.output
    assert opened(tmp_path / "dev-db")  # relative to the file, not to the working directory


def test_user_level_profiles_file_and_a_project_file_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = tmp_path / "xdg-config" / "yangkey"
    user.mkdir(parents=True)
    write(user, "yangkey.yaml", "profiles:\n  default:\n    embedded: user-db\n")
    stores(user, "user-db")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    result = run("sql", "SELECT 1 AS one")
    assert (result.exit_code, result.stdout) == (0, "one\n1\n"), result.output
    assert opened(user / "user-db")
    # a yangkey.yaml of the project (here, or above) comes first
    write(elsewhere, "yangkey.yaml", "profiles:\n  default:\n    embedded: project-db\n")
    stores(elsewhere, "project-db")
    assert run("sql", "SELECT 1").exit_code == 0
    assert opened(elsewhere / "project-db")


def test_profile_named_without_a_file(tmp_path: Path) -> None:
    assert_one_error(run("--profile", "dev", "sql", "SELECT 1"), "yangkey.yaml", "'dev'")


# ------------------------------------------------------------------------ output that pipes


def test_piped_state_is_tsv_one_message_per_line(store: str) -> None:
    result = run("state", "--embedded", store)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) == 2  # header + the one key
    header = lines[0].split("\t")
    fields = lines[1].split("\t")
    assert header[:3] == ["message_key", "node", "subscription_id"]
    assert len(fields) == len(header)
    assert fields[0] == f"{NODE}\\n1042\\n/ietf-interfaces:interfaces/interface[name='eth0']"
    # the stored payload holds a TAB, a LF and two backslashes (a JSON-escaped one)
    assert fields[header.index("payload")] == r'{"a":\t"x\\\\y",\n"n": 4}'
    xpath = "/ietf-interfaces:interfaces/interface[name='eth0']"
    assert fields[header.index("xpaths")] == json.dumps([xpath])


def test_explicit_table_format_is_a_table(store: str) -> None:
    result = run("state", "--embedded", store, "--format", "table")
    assert result.exit_code == 0, result.output
    assert "┃ node" in result.stdout and NODE in result.stdout
    assert "1 row(s)" in result.stderr
    # the compact view (as the demo's): the key's parts, event time and a value summary, not
    # every column squeezed into the terminal
    header = next(line for line in result.stdout.splitlines() if line.startswith("┃"))
    assert [cell.strip() for cell in header.strip("┃").split("┃")] == [
        "node", "sub", "XPaths (key line 3)", "event time", "seq", "value",
    ]  # fmt: skip
    assert "kafka_topic" not in result.stdout and "generation" not in result.stdout
    import re  # noqa: PLC0415

    assert re.search(r"T\d\d:\d\d:\d\d\.\d{3}Z", result.stdout)  # event time to the ms
    assert not re.search(r"\.\d{9}Z", result.stdout)
    # filtered by --node: the title says which, the column is gone
    one = run("state", "--embedded", store, "--node", NODE, "--format", "table")
    assert f"current state of {NODE}" in one.stdout
    header = next(line for line in one.stdout.splitlines() if line.startswith("┃"))
    assert "node" not in header and "sub" in header


def test_csv_record_is_one_line_and_round_trips_with_escapes(store: str) -> None:
    result = run("history", "--embedded", store, "--node", NODE, "--format", "csv")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) == 1 + ROWS
    records = list(csv.DictReader(io.StringIO(result.stdout)))
    assert [r["sequence_number"] for r in records] == [str(n) for n in range(ROWS)]
    assert records[0]["message_key"].split("\\n")[0] == NODE
    assert records[0]["payload"] == '{"a":\t"x' + "\\" * 4 + r'y",\n"n": 0}'


def test_paged_output_ends_with_a_cursor_line_until_exhausted(store: str) -> None:
    seen: list[str] = []
    after: list[str] = []
    for _ in range(ROWS):
        result = run("history", "--embedded", store, "--node", NODE, "--limit", "2", *after)
        assert result.exit_code == 0, result.output
        lines = result.stdout.splitlines()
        rows = lines[1:]
        if rows and rows[-1].startswith("# next page: --after "):
            after = ["--after", rows.pop().removeprefix("# next page: --after ")]
        else:
            after = []
        seen += [r.split("\t")[6] for r in rows]  # sequence_number
        if not after:
            break
    assert seen == [str(n) for n in range(ROWS)]
    # a full page that is the last one has no cursor either
    last = run("history", "--embedded", store, "--node", NODE, "--limit", str(ROWS))
    lines = last.stdout.splitlines()
    assert len(lines) == 1 + ROWS and not lines[-1].startswith("#"), last.stdout


def test_json_pages_end_with_a_cursor_object(store: str) -> None:
    result = run("history", "--embedded", store, "--node", NODE, "--limit", "2", "--json")
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(lines) == 3 and lines[0]["node"] == NODE
    token = lines[-1]["next_page"]["after"]
    more = run("history", "--embedded", store, "--node", NODE, "--after", token,
               "--format", "json")  # fmt: skip
    assert json.loads(more.stdout.splitlines()[0])["sequence_number"] == 2


def test_catalog_show_piped_is_tsv() -> None:
    result = run("catalog", "show", "-s", str(EXAMPLE))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split("\t")[:2] == ["subscription_id", "type"]
    assert all(len(line.split("\t")) == len(lines[0].split("\t")) for line in lines)
    assert len(lines) > 2


# ------------------------------------------------------------------------------- yangkey sql


def test_sql_formats(tmp_path: Path) -> None:
    db = str(tmp_path)
    query = "SELECT 'a\\tb\\nc' AS s, [1, 2] AS xs, NULL AS nothing"
    tsv = run("sql", "--embedded", db, query)
    assert tsv.stdout == "s\txs\tnothing\na\\tb\\nc\t[1,2]\t\n", tsv.output
    csv_out = run("sql", "--embedded", db, "--format", "csv", query)
    assert csv_out.stdout == "s,xs,nothing\na\tb\\nc,\"[1,2]\",\n"
    as_json = run("sql", "--embedded", db, "--format", "json", query)
    assert json.loads(as_json.stdout) == {"s": "a\tb\nc", "xs": [1, 2], "nothing": None}


def test_sql_reads_the_query_from_stdin(tmp_path: Path) -> None:
    result = run("sql", "--embedded", str(tmp_path), input="SELECT 7 AS n;\n")
    assert (result.exit_code, result.stdout) == (0, "n\n7\n"), result.output


def test_sql_reads_the_store(store: str) -> None:
    result = run("sql", "--embedded", store, "SELECT count() AS n FROM yangkey.history")
    assert result.stdout == f"n\n{ROWS}\n", result.output


def test_sql_error_is_one_line(tmp_path: Path) -> None:
    assert_one_error(run("sql", "--embedded", str(tmp_path), "SELEC 1"), "Syntax error")
    assert_one_error(
        run("sql", "--embedded", str(tmp_path), "SELECT * FROM nowhere.nothing"), "nowhere"
    )
    missing = str(tmp_path / "missing")
    assert_one_error(run("sql", "--embedded", missing, "SELECT 1"), missing, "ddl apply")
    assert not Path(missing).exists()


# ------------------------------------------------------------------------ usage errors: 2


@pytest.mark.parametrize(
    "args",
    [
        ["stat"],
        ["state", "--nod", "pe1"],
        ["sample", "--count", "2"],
        ["state"],
        ["history", "--embedded", "db"],
        ["sql", "SELECT 1"],
        ["sql", "--embedded", "db", ""],
        ["catalog", "show", "-s", "missing.yaml"],
        ["ddl", "generate", "-s", "missing.yaml"],
        ["ddl", "apply", "-s", "missing.yaml", "--embedded", "db"],
        ["ingest", "-s", "missing.yaml", "-b", "127.0.0.1:1", "--embedded", "db"],
    ],
)
def test_usage_errors_exit_2(args: list[str]) -> None:
    result = run(*args)
    assert result.exit_code == 2, (args, result.output)
    assert "Traceback" not in result.output
    # click's own errors read as ours do: "error: …" under the usage line and the hint
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith("error: ")
    assert lines[0].startswith("Usage: ")
    assert "Error:" not in result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["--subscriptions", "missing.yaml", "--input", "x", "--dry-run"],
        ["-s", str(EXAMPLE), "--input", "kafka://raw", "-b", "127.0.0.1:1", "--stream"],
        # option combinations are usage errors too (README: exit 2), before anything starts
        ["-s", str(EXAMPLE), "--input", "x", "--dry-run", "--trigger-interval", "1s"],
        ["-s", str(EXAMPLE), "--input", "x", "--dry-run", "--restart-on-failure", "1"],
    ],
)
def test_produce_usage_errors_exit_2(args: list[str]) -> None:
    pytest.importorskip("pyspark")
    result = run("produce", *args)
    assert result.exit_code == 2, result.output


def test_resolve_format_follows_the_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    with click.Context(click.Command("x")):
        monkeypatch.setattr("sys.stdout.isatty", lambda: True)
        assert resolve_format(None) == "table"
        assert resolve_format("csv") == "csv"
        monkeypatch.setattr("sys.stdout.isatty", lambda: False)
        assert resolve_format(None) == "tsv"
        assert resolve_format(None, ("key", "json")) == "key"


def test_librdkafka_warnings_are_summarised_in_one_line() -> None:
    echoed: list[str] = []
    with quiet_librdkafka(echoed.append) as logger:
        for n in range(40):
            logger.warning("FAIL [thrd:bootstrap]: connect failed %d", n)
        logger.debug("not a warning")
    assert len(echoed) == 1  # start-up: only the summary
    assert "40 librdkafka warning(s)" in echoed[0] and "connect failed 39" in echoed[0]
    quiet: list[str] = []
    with quiet_librdkafka(quiet.append):
        pass
    assert quiet == []


REFUSED = (
    "FAIL [yangkey-ingest#consumer-1] [thrd:127.0.0.1:9/bootstrap]: 127.0.0.1:9/bootstrap: "
    "Connect to ipv4#127.0.0.1:9 failed: Connection refused (after 0ms in state CONNECT)"
)
LOST = (
    "FAIL [yangkey-ingest#consumer-1] [thrd:127.0.0.1:9/1]: 127.0.0.1:9/1: Disconnected: "
    "connection closed by peer: receive 0 after POLLIN (after 20731ms in state UP)"
)


def test_a_lost_connection_is_one_line_per_burst() -> None:
    # the records are librdkafka's own, seen when a broker was killed under a consumer
    now = [0.0]
    echoed: list[str] = []
    logs = quiet_librdkafka(echoed.append, quiet=60, clock=lambda: now[0])
    with pytest.raises(RuntimeError), logs as logger:
        for _ in range(30):  # never up: nothing (the command's own error says it)
            logger.error(REFUSED)
        assert echoed == []
        now[0] = 100.0
        logger.info(LOST)
        logger.info(LOST.replace("/1", "/bootstrap"))
        for _ in range(50):
            logger.error(REFUSED)
            now[0] += 1
        assert echoed == [
            "kafka: connection lost: 127.0.0.1:9/1: Disconnected: connection closed by peer: "
            "receive 0 after POLLIN (after 20731ms in state UP)"
        ]
        now[0] += 61  # it came back, then went away again
        logger.info(LOST)
        assert len(echoed) == 2
        raise RuntimeError("the command fails: its error line, no summary")
    assert len(echoed) == 2


def test_profile_fields_are_the_long_option_names(tmp_path: Path) -> None:
    text = "profiles:\n  default:\n    schema_registry: http://r:8081\n    yang_dir: [yang, /abs]\n"
    write(tmp_path, "yangkey.yaml", text + "    bootstrap: k:9092\n    database: telemetry\n")
    options = {"--schema-registry": "url", "--yang-dir": "yang_dirs", "--bootstrap": "bootstrap"}
    assert profile_defaults(None, options) == {
        "url": "http://r:8081",
        "yang_dirs": [str(tmp_path / "yang"), "/abs"],
        "bootstrap": "k:9092",
    }
    help_text = run("registry", "register", "--help").stdout
    assert "--schema-registry" in help_text and "YANGKEY_SCHEMA_REGISTRY" in help_text


def test_a_servers_native_values_print_in_every_format(capsys: pytest.CaptureFixture[str]) -> None:
    # clickhouse-connect hands back Python values, not text
    row = {
        "t": dt.datetime(2026, 11, 20, 10, 0, 0, 500000, tzinfo=dt.UTC),
        "d": Decimal("1.50"),
        "u": uuid.UUID(int=1),
        "ip": ipaddress.ip_address("2001:db8::1"),
        "b": b"raw\tbytes",
        "xs": [ipaddress.ip_address("10.0.0.1")],
        "ok": True,
    }
    for fmt in ("json", "tsv", "csv", "table"):
        emit_rows([row], fmt)
    out = capsys.readouterr().out.splitlines()
    assert json.loads(out[0]) == {
        "t": "2026-11-20 10:00:00.500000+00:00",
        "d": "1.50",
        "u": "00000000-0000-0000-0000-000000000001",
        "ip": "2001:db8::1",
        "b": "raw\tbytes",
        "xs": ["10.0.0.1"],
        "ok": True,
    }
    assert out[2] == (
        "2026-11-20 10:00:00.500000+00:00\t1.50\t00000000-0000-0000-0000-000000000001\t"
        '2001:db8::1\traw\\tbytes\t["10.0.0.1"]\ttrue'
    )
    assert out[4].startswith("2026-11-20 10:00:00.500000+00:00,1.50,")
    assert any("2001:db8::1" in line for line in out[5:])


@pytest.mark.parametrize(
    "args",
    [
        ("catalog", "show", "--shared-catalog"),
        ("ddl", "generate", "--shared-catalog", "-o", "{out}"),
    ],
)
def test_an_unreachable_shared_catalog_is_one_error_line(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    """librdkafka retries a refused connection hundreds of times while the command waits for
    metadata; each retry was a ``kafka: FAIL …`` line above the one error."""
    pytest.importorskip("confluent_kafka")
    argv = [a.replace("{out}", str(tmp_path / "ddl")) for a in args]
    assert_one_error(invoke(*argv, "--bootstrap", "127.0.0.1:1"), "127.0.0.1:1", "cannot reach")


# ------------------------------------------------------------------------ shell completion


def test_shell_completion_as_the_readme_sets_it_up() -> None:
    import os  # noqa: PLC0415
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415

    readme = (Path(__file__).parents[2] / "README.md").read_text(encoding="utf-8")
    assert 'eval "$(_YANGKEY_COMPLETE=bash_source yangkey)"' in readme
    script = [sys.executable, "-c", "from yangkey.cli import main; main(prog_name='yangkey')"]
    source = subprocess.run(
        script,
        env={**os.environ, "_YANGKEY_COMPLETE": "bash_source"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert "complete -o nosort -F" in source.stdout
    words = subprocess.run(
        script,
        env={
            **os.environ,
            "_YANGKEY_COMPLETE": "bash_complete",
            "COMP_WORDS": "yangkey kafka to",
            "COMP_CWORD": "2",
        },
        capture_output=True,
        text=True,
        check=False,
    )
    assert words.stdout.split() == ["plain,topics"]


# ------------------------------------------------------------------------ -v and -q


def test_quiet_keeps_only_errors(tmp_path: Path) -> None:
    loud = run("ddl", "apply", "-s", str(EXAMPLE), "--embedded", str(tmp_path / "a"))
    assert loud.exit_code == 0, loud.output
    assert "created  table" in loud.stderr
    quiet = run("-q", "ddl", "apply", "-s", str(EXAMPLE), "--embedded", str(tmp_path / "b"))
    assert quiet.exit_code == 0, quiet.output
    assert quiet.stderr == ""
    assert opened(tmp_path / "b")  # it did the work, silently
    both = run("-v", "-q", "ddl", "apply", "-s", str(EXAMPLE), "--embedded", str(tmp_path))
    assert both.exit_code == 2
    assert both.stderr.strip().splitlines()[-1] == "error: give -v or -q, not both"


def test_verbose_logs_on_stderr() -> None:
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415

    def stderr(*flags: str) -> str:
        return subprocess.run(
            [sys.executable, "-m", "yangkey.cli", *flags, "doctor", "--format", "json"],
            capture_output=True,
            text=True,
            check=False,
        ).stderr

    debug = "DEBUG yangkey.native: yangkey decode path: "
    assert debug not in stderr()
    assert debug not in stderr("-v")  # INFO and above
    assert debug in stderr("-vv")
