"""DDL rendering: structure, quoting, determinism, and ClickHouse's own parser on every statement.

chdb holds one data path per process: the module's session is closed when the module ends.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from factories import topic_spec

from yangkey.catalog import TopicSpec
from yangkey.clickhouse import ClickHouseError
from yangkey.clickhouse.apply import validate
from yangkey.clickhouse.commands import ddl, state
from yangkey.clickhouse.commands import history as history_command
from yangkey.clickhouse.commands import ingest as ingest_command
from yangkey.clickhouse.connection import ChdbConnection, _clean_message, open_embedded
from yangkey.clickhouse.ddl import XPATH_LINE_RE, DdlOptions, Statement, render_ddl, to_script
from yangkey.clickhouse.identifiers import (
    LONGEST_SUFFIX,
    escaped_file_name_length,
    max_table_name_length,
    quote_identifier,
    quote_literal,
    table_base,
)
from yangkey.clickhouse.tables import topic_tables
from yangkey.clickhouse.templating import template_names
from yangkey.errors import ConfigError


def topic(name: str, *, compaction: bool = False, retention: int = 7 * 86400) -> TopicSpec:
    """A derived topic of these tests: six partitions, a week's retention unless told."""
    return topic_spec(name, compaction=compaction, retention_seconds=retention, partitions=6)


TOPICS = (
    topic("netops-current-state-if-interfaces-interface", compaction=True),
    topic("netops-stats-sys-system-clock", retention=30 * 86400),
    topic("odd.name-with.dots"),
)
DEAD_LETTER = "netops-yangkey-dead-letter"

FLAVOURS = {
    "server": DdlOptions(mode="server", dead_letter_topic=DEAD_LETTER),
    "server-brokers": DdlOptions(
        mode="server", dead_letter_topic=DEAD_LETTER, kafka_brokers="k1:9092,k2:9092"
    ),
    "embedded": DdlOptions(mode="embedded", dead_letter_topic=DEAD_LETTER),
    "cluster": DdlOptions(
        mode="server", cluster="prod", dead_letter_topic=DEAD_LETTER,
        table_settings={"index_granularity": 4096, "storage_policy": "hot"},
    ),
    "compacted-only": DdlOptions(mode="embedded", current_state="compacted", database="x-y"),
}


def by_name(statements: list[Statement]) -> dict[str, Statement]:
    return {s.name: s for s in statements}


# -- every statement parses ------------------------------------------------------------------


@pytest.mark.parametrize("flavour", sorted(FLAVOURS))
def test_every_statement_parses_with_clickhouse(chdb_conn: ChdbConnection, flavour: str) -> None:
    statements = render_ddl(TOPICS, FLAVOURS[flavour])
    validate(chdb_conn, statements)  # raises on the first statement that does not parse
    for statement in statements:
        formatted = chdb_conn.query(
            "SELECT formatQuery({sql:String}) AS f", {"sql": statement.sql}
        )[0]["f"]
        assert formatted.startswith("CREATE"), statement.name


def test_validate_reports_a_broken_statement(chdb_conn: ChdbConnection) -> None:
    broken = Statement("table", "yangkey.t", "CREATE TABLE t (x UInt8 ENGINE = Null")
    with pytest.raises(ClickHouseError, match=r"table yangkey\.t does not parse"):
        validate(chdb_conn, [broken])


def test_server_flavour_creates_on_chdb_against_real_kafka_virtual_columns(
    chdb_conn: ChdbConnection,
) -> None:
    """chdb ships the Kafka engine: the views over it are checked against its real virtual
    columns. (chdb answers "Shutdown was called" when a Kafka table starts its consumers, yet
    creates the table: that one message is tolerated.)"""
    options = replace(FLAVOURS["server-brokers"], database="server_flavour")
    for statement in render_ddl(TOPICS[:1], options):
        try:
            chdb_conn.command(statement.sql)
        except ClickHouseError as exc:
            assert "Shutdown was called" in str(exc), statement.name
            assert "ENGINE = Kafka(" in statement.sql
    names = topic_tables(TOPICS[0].name, "server_flavour")
    engines = {
        row["name"]: row["engine"]
        for row in chdb_conn.query(
            "SELECT name, engine FROM system.tables WHERE database = 'server_flavour'"
        )
    }
    assert engines[names.queue] == "Kafka"
    assert engines[names.mv_parse] == "MaterializedView"
    assert engines[names.current] == "ReplacingMergeTree"
    virtual = chdb_conn.query(
        f"DESCRIBE TABLE `server_flavour`.`{names.queue}` "
        "SETTINGS describe_include_virtual_columns = 1"
    )
    kafka_columns = {r["name"]: r["type"] for r in virtual if r["name"] != "_table"}
    assert "_raw_message" in kafka_columns and "_headers.value" in kafka_columns
    embedded_sql = by_name(render_ddl(TOPICS[:1], FLAVOURS["embedded"]))[
        f"yangkey.{names.queue}"
    ].sql
    for name, type_ in kafka_columns.items():
        # the embedded queue table has every column of the Kafka table, with the same type
        assert f"`{name}` {type_}" in embedded_sql, name


# -- structure -------------------------------------------------------------------------------


def test_objects_per_topic_and_order() -> None:
    statements = render_ddl(TOPICS, FLAVOURS["embedded"])
    names = [s.name for s in statements]
    assert names[0] == "yangkey"  # database first
    assert names[1] == "yangkey.errors"
    created: set[str] = set()
    for statement in statements:
        if statement.kind == "view":
            source = re.search(r"^\s*FROM (`[^`]+`\.`[^`]+`)$", statement.sql, re.M)
            target = re.search(r"^TO (`[^`]+`\.`[^`]+`)$", statement.sql, re.M)
            assert source and target, statement.sql
            for ref in (source.group(1), target.group(1)):
                assert ref.replace("`", "") in created, f"{statement.name} before {ref}"
        created.add(statement.name)
    for spec in TOPICS:
        t = topic_tables(spec.name, "yangkey")
        per_topic = [s.name.split(".", 1)[1] for s in statements if s.topic == spec.name]
        assert per_topic == [
            t.history, t.current, t.parsed, t.mv_history, t.mv_current, t.mv_errors,
            t.queue, t.mv_parse,
        ]  # the view that starts consumption comes last
    assert len(statements) == 2 + 8 * len(TOPICS) + 2 + 2


def test_statement_counts_per_flavour() -> None:
    counts = {name: len(render_ddl(TOPICS, options)) for name, options in FLAVOURS.items()}
    n = len(TOPICS)
    assert counts["embedded"] == 2 + 8 * n + 2 + 2
    assert counts["server"] == counts["embedded"]
    assert counts["server-brokers"] == counts["server"] + 1  # + named collection
    # cluster: + distributed errors, + 2 distributed tables per topic
    assert counts["cluster"] == counts["server"] + 1 + 2 * n
    # only the compacted topic gets a current-state table, no dead letter
    assert counts["compacted-only"] == 2 + 8 + 6 * (n - 1) + 2


def test_rendering_is_deterministic() -> None:
    first = to_script(render_ddl(TOPICS, FLAVOURS["cluster"]), ["header"])
    second = to_script(render_ddl(list(TOPICS), FLAVOURS["cluster"]), ["header"])
    assert first == second
    assert first.startswith("-- header\n\nCREATE DATABASE")
    assert first.count(";\n") == len(render_ddl(TOPICS, FLAVOURS["cluster"]))


def test_server_queue_uses_named_collection_and_no_secrets() -> None:
    statements = render_ddl(TOPICS, FLAVOURS["server"])
    script = to_script(statements)
    queue = by_name(statements)[f"yangkey.{topic_tables(TOPICS[0].name, 'yangkey').queue}"].sql
    assert "ENGINE = Kafka(`yangkey_kafka`)" in queue
    assert f"kafka_topic_list = '{TOPICS[0].name}'" in queue
    assert f"kafka_group_name = 'yangkey-clickhouse.{TOPICS[0].name}'" in queue
    assert "kafka_format = 'RawBLOB'" in queue
    assert "kafka_handle_error_mode = 'stream'" in queue
    assert "kafka_broker_list" not in script
    assert "password" not in script.lower() and "sasl" not in script.lower()
    collection = by_name(render_ddl(TOPICS, FLAVOURS["server-brokers"]))["yangkey_kafka"].sql
    assert "kafka_broker_list = 'k1:9092,k2:9092'" in collection


def test_embedded_queue_is_null_with_virtual_columns() -> None:
    statements = by_name(render_ddl(TOPICS, FLAVOURS["embedded"]))
    queue = statements[f"yangkey.{topic_tables(TOPICS[0].name, 'yangkey').queue}"].sql
    assert "ENGINE = Null" in queue and "Kafka" not in queue.split("COMMENT")[0]
    for column in ("_key", "_topic", "_partition", "_offset", "_timestamp", "_headers.name",
                   "_headers.value", "_error", "_raw_message"):
        assert f"`{column}`" in queue


def test_same_views_in_both_modes() -> None:
    server = {s.name: s.sql for s in render_ddl(TOPICS, FLAVOURS["server"]) if s.kind == "view"}
    embedded = {
        s.name: s.sql for s in render_ddl(TOPICS, FLAVOURS["embedded"]) if s.kind == "view"
    }
    assert server == embedded


def test_history_and_current_tables() -> None:
    statements = by_name(render_ddl(TOPICS, FLAVOURS["embedded"]))
    names = topic_tables(TOPICS[1].name, "yangkey")
    history = statements[f"yangkey.{names.history}"].sql
    assert "ENGINE = MergeTree\nORDER BY (message_key, event_time)" in history
    assert f"TTL toDateTime(event_time) + INTERVAL {30 * 86400} SECOND" in history
    assert "`event_time` DateTime64(9, 'UTC')" in history
    assert "`node` LowCardinality(String)" in history
    assert "INDEX `idx_xpaths` xpaths TYPE bloom_filter" in history
    current = statements[f"yangkey.{names.current}"].sql
    assert "ENGINE = ReplacingMergeTree(version)\nORDER BY message_key" in current
    assert "`version` UInt256" in current
    compacted = statements[f"yangkey.{topic_tables(TOPICS[0].name, 'yangkey').current}"].sql
    assert "TTL" not in compacted  # a compacted topic keeps every key's last value


def test_cluster_mode() -> None:
    statements = render_ddl(TOPICS, FLAVOURS["cluster"])
    for statement in statements:
        assert " ON CLUSTER `prod`" in statement.sql.splitlines()[0], statement.name
    named = by_name(statements)
    names = topic_tables(TOPICS[0].name, "yangkey", cluster=True)
    local = named[f"yangkey.{names.current_local}"].sql
    assert "ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/{database}/" \
        "{table}', '{replica}', version)" in local
    distributed = named[f"yangkey.{names.current}"].sql
    assert (
        f"ENGINE = Distributed('prod', 'yangkey', '{names.current_local}', "
        "cityHash64(message_key))" in distributed
    )
    # views write through the distributed tables so that a key always lands on one shard
    assert f"TO `yangkey`.`{names.current}`" in named[f"yangkey.{names.mv_current}"].sql
    assert "ReplicatedMergeTree" in named["yangkey.errors_local"].sql
    assert "SETTINGS index_granularity = 4096, storage_policy = 'hot'" in local


def test_embedded_and_cluster_is_refused() -> None:
    with pytest.raises(ConfigError, match="server mode"):
        DdlOptions(mode="embedded", cluster="c")


def test_kafka_settings_cannot_override_fixed_ones() -> None:
    options = replace(FLAVOURS["server"], kafka_settings={"kafka_format": "JSONEachRow"})
    with pytest.raises(ConfigError, match="kafka_format"):
        render_ddl(TOPICS, options)
    options = replace(FLAVOURS["server"], kafka_settings={"kafka_skip_broken_messages": 5},
                      kafka_num_consumers=3, kafka_thread_per_consumer=True)
    queue = by_name(render_ddl(TOPICS, options))[
        f"yangkey.{topic_tables(TOPICS[0].name, 'yangkey').queue}"
    ].sql
    assert "kafka_num_consumers = 3" in queue
    assert "kafka_thread_per_consumer = 1" in queue
    assert queue.index("kafka_thread_per_consumer") < queue.index("kafka_skip_broken_messages")


def test_dead_letter_topic_reads_into_errors() -> None:
    statements = by_name(render_ddl(TOPICS, FLAVOURS["embedded"]))
    view = statements[f"yangkey.{topic_tables(DEAD_LETTER, 'yangkey').mv_errors}"].sql
    assert "TO `yangkey`.`errors`" in view
    assert "'yangkey-error'" in view and "'yangkey-source'" in view
    with pytest.raises(ConfigError, match="dead-letter"):
        render_ddl(TOPICS, replace(FLAVOURS["embedded"], dead_letter_topic=TOPICS[0].name))


def test_templates_are_packaged() -> None:
    names = template_names()
    assert "macros.sql.j2" in names
    assert {"queue_table.sql.j2", "history_table.sql.j2", "current_table.sql.j2",
            "mv_parse.sql.j2", "errors_table.sql.j2", "distributed_table.sql.j2"} <= set(names)


# -- identifiers -----------------------------------------------------------------------------


def test_quote_identifier_always_escapes() -> None:
    assert quote_identifier("a-b.c") == "`a-b.c`"
    assert quote_identifier("`x`") == "`\\`x\\``"  # never passed through as "already quoted"
    assert quote_identifier("a\\b") == "`a\\\\b`"
    with pytest.raises(ValueError):
        quote_identifier("")


def test_quote_literal() -> None:
    assert quote_literal("it's") == "'it\\'s'"
    assert quote_literal("a\\b\nc") == "'a\\\\b\\nc'"


def test_hostile_database_name_stays_an_identifier(chdb_conn: ChdbConnection) -> None:
    options = DdlOptions(mode="embedded", database="db`; DROP TABLE x; --")
    statements = render_ddl(TOPICS[:1], options)
    validate(chdb_conn, statements)
    first = chdb_conn.query("SELECT formatQuery({sql:String}) AS f",
                            {"sql": statements[0].sql})[0]["f"]
    assert first.startswith("CREATE DATABASE IF NOT EXISTS `db\\`; DROP TABLE x; --`")


#: Topic names Kafka accepts at its 249-character limit: plain, escaped ('.' and '_'-free
#: characters outside [a-zA-Z0-9_] cost 3 bytes each), and two sharing all but the last one.
LONGEST_TOPICS = (
    "netops-" + "-".join(["a" * 9] * 24),  # 247 characters, many '-'
    "n" * 249,
    ".".join(["x"] * 125),
    "n" * 248 + "z",
)


@pytest.mark.parametrize("database", ["yangkey", "d", "y" * 60, "odd-db.name"])
def test_longest_kafka_topics_get_tables_clickhouse_accepts(
    chdb_conn: ChdbConnection, database: str
) -> None:
    """Every object of every 249-character topic is created for real (ClickHouse checks the
    length of a table name against its database's); the names stay apart."""
    specs = [topic(name, compaction=True) for name in LONGEST_TOPICS]
    statements = render_ddl(specs, DdlOptions(mode="embedded", database=database))
    for statement in statements:
        chdb_conn.command(statement.sql)  # raises on a name that is too long
    bases = {table_base(name, database) for name in LONGEST_TOPICS}
    assert len(bases) == len(LONGEST_TOPICS)
    for name in LONGEST_TOPICS:
        cluster = topic_tables(name, database, cluster=True)
        longest = max(escaped_file_name_length(n) for n in vars(cluster).values() if n != name)
        assert longest <= max_table_name_length(database)
    # this chdb's own cap (reported in the error) is never below the one assumed
    probe = "x" * 250
    with pytest.raises(ClickHouseError, match=r"max length of table name .* is (\d+)") as caught:
        chdb_conn.command(
            f"CREATE TABLE {quote_identifier(database)}.`{probe}` (a UInt8) ENGINE = Null"
        )
    reported = int(re.findall(r"is (\d+), current", str(caught.value))[0])
    assert max_table_name_length(database) <= reported
    assert table_base("if-interfaces-interface", database) == "if-interfaces-interface"


def test_a_database_name_with_no_room_for_tables_is_refused() -> None:
    with pytest.raises(ConfigError, match="too long for ClickHouse table names"):
        DdlOptions(database="d" * 180)
    DdlOptions(database="d" * 179)
    assert escaped_file_name_length(LONGEST_SUFFIX) == len(LONGEST_SUFFIX)


def test_xpath_line_regex_accepts_quoted_separators() -> None:
    good = "/m:a/b[k='x | y'] | /m:a/b[k=\"it's\"] | /m:c[k=concat('a',\"'\",'b')]"
    assert re.fullmatch(XPATH_LINE_RE, good)
    assert not re.fullmatch(XPATH_LINE_RE, "/m:a/b[k='unbalanced]")
    assert not re.fullmatch(XPATH_LINE_RE, "")


# -- commands --------------------------------------------------------------------------------

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "subscriptions.yaml"


def test_generate_writes_reproducible_files(tmp_path: Path) -> None:
    runner = CliRunner()
    outputs = []
    for run in ("a", "b"):
        result = runner.invoke(
            ddl, ["generate", "-s", str(EXAMPLES), "-o", str(tmp_path / run)],
            catch_exceptions=False,
        )
        assert result.exit_code == 0, result.output
        outputs.append({p.name: p.read_text() for p in sorted((tmp_path / run).iterdir())})
    assert outputs[0] == outputs[1]
    assert sorted(outputs[0]) == ["embedded.sql", "server.sql"]
    server = outputs[0]["server.sql"]
    assert f"from {EXAMPLES.as_posix()};" in server
    count = int(re.search(r"-- (\d+) statements\.", server).group(1))  # type: ignore[union-attr]
    assert server.count(";\n\n") + 1 == count
    assert "ENGINE = Kafka(`yangkey_kafka`)" in server
    assert "ENGINE = Kafka" not in outputs[0]["embedded.sql"]
    cluster = runner.invoke(ddl, ["generate", "-s", str(EXAMPLES), "--cluster", "c1"])
    assert cluster.exit_code == 0 and "ON CLUSTER `c1`" in cluster.output
    refused = runner.invoke(ddl, ["generate", "-s", str(EXAMPLES), "--mode", "embedded",
                                  "--cluster", "c1"])
    assert refused.exit_code == 1 and "error:" in refused.output


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    """A separate process: chdb allows one data path per process."""
    return subprocess.run(
        [sys.executable, "-m", "yangkey.clickhouse.commands", *args],
        capture_output=True, text=True, timeout=120, check=False,
    )


@pytest.mark.needs("clickhouse")
def test_apply_state_history_commands(tmp_path: Path) -> None:
    path = str(tmp_path / "chdb")
    applied = _cli("ddl", "apply", "-s", str(EXAMPLES), "--embedded", path)
    assert applied.returncode == 0, applied.stderr
    assert re.search(r"(\d+) created, 0 already existed", applied.stderr)
    again = _cli("ddl", "apply", "-s", str(EXAMPLES), "--embedded", path)
    assert again.stderr.splitlines()[-1].startswith("0 created, ")
    state = _cli("state", "--embedded", path, "--node", "pe1", "--format", "json")
    assert state.returncode == 0, state.stderr
    assert state.stdout == ""
    missing = _cli("history", "--embedded", path, "--node", "pe1", "-d", "nope")
    assert missing.returncode == 1
    assert "error:" in missing.stderr and "database 'nope' does not exist" in missing.stderr
    no_password_in_url = _cli("state", "--clickhouse", "http://u:secret@127.0.0.1:1/db")
    assert no_password_in_url.returncode == 1
    assert "CLICKHOUSE_PASSWORD" in no_password_in_url.stderr
    assert "secret" not in no_password_in_url.stderr


def test_negative_retention_keeps_data_forever() -> None:
    """Kafka's retention -1 means forever: a TTL of -1 s would delete every row at once."""
    forever = topic("netops-stats-forever", retention=-1)
    options = replace(FLAVOURS["embedded"], errors_retention_seconds=-1)
    statements = by_name(render_ddl([forever], options))
    names = topic_tables(forever.name, "yangkey")
    for table in (names.history, names.current, "errors"):
        assert "TTL" not in statements[f"yangkey.{table}"].sql, table


def test_credentials_in_kafka_settings_are_refused() -> None:
    for name in ("kafka_sasl_password", "kafka_sasl_username", "kafka_ssl_key_password"):
        with pytest.raises(ConfigError, match="named collection"):
            replace(FLAVOURS["server"], kafka_settings={name: "s3cret"})


def test_line_breaks_in_the_header_stay_in_the_comment() -> None:
    script = to_script([Statement("database", "d", "SELECT 1")], ["from a\nDROP TABLE x;\rb"])
    assert script.startswith("-- from a\n-- DROP TABLE x;\n-- b\n\nSELECT 1;")


def test_unwritable_output_dir_is_one_error_line(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    result = CliRunner().invoke(ddl, ["generate", "-s", str(EXAMPLES), "-o", str(blocker / "x")])
    assert result.exit_code == 1, result.output
    assert result.output.startswith("error: ") and "cannot write" in result.output
    assert not isinstance(result.exception, OSError)


def test_uncreatable_embedded_path_is_one_error_line(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(ConfigError, match="cannot create the data directory"):
        open_embedded(blocker / "chdb")
    result = CliRunner().invoke(state, ["--embedded", str(blocker / "chdb")])
    assert result.exit_code == 1 and result.output.startswith("error: "), result.output


def test_malformed_server_url_is_one_error_line() -> None:
    result = CliRunner().invoke(state, ["--clickhouse", "http://[::1:8123/db"])
    assert result.exit_code == 1 and result.output.startswith("error: "), result.output
    assert "invalid ClickHouse URL" in result.output


def test_numbers_beyond_their_column_are_refused_by_the_commands(tmp_path: Path) -> None:
    path = str(tmp_path / "never-opened")
    for command, args in (
        (state, ["--limit", "18446744073709551616"]),
        (state, ["--subscription-id", "4294967296"]),
        (history_command, ["--node", "pe1", "--limit", "18446744073709551616"]),
        (history_command, ["--node", "pe1", "--subscription-id", "4294967296"]),
        (history_command, ["--node", "pe1", "--since", "garbage"]),
        (ingest_command, ["-s", str(EXAMPLES), "-b", "127.0.0.1:1", "--batch-size", "1000001"]),
    ):
        result = CliRunner().invoke(command, ["--embedded", path, *args])
        assert result.exit_code != 0, (args, result.output)
        assert result.exception is None or isinstance(result.exception, SystemExit), args
    assert not Path(path).exists()  # refused before anything was opened


@pytest.mark.needs("clickhouse")
def test_history_since_garbage_is_one_line_in_our_words(tmp_path: Path) -> None:
    path = str(tmp_path / "chdb")
    assert _cli("ddl", "apply", "-s", str(EXAMPLES), "--embedded", path).returncode == 0
    result = _cli("history", "--embedded", path, "--node", "pe1", "--since", "garbage")
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "error: --since: not an RFC 3339 time such as 2026-11-20T10:00:00Z: 'garbage'"
    ]


def test_engine_stack_trace_never_reaches_a_message() -> None:
    raw = (
        "Code: 69. DB::Exception: The max length of table name for database yangkey is 206, "
        "current length is 230. (ARGUMENT_OUT_OF_BOUND)\nStack trace:\n0. DB::Exception\n1. x"
    )
    assert _clean_message(raw) == (
        "The max length of table name for database yangkey is 206, current length is 230"
    )
    assert _clean_message("first line\nsecond line") == "first line"
