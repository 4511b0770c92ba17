"""One declaration per CLI option, one meaning per flag (README, "One set of names").

Walks the whole command tree (the lazy groups loaded) and holds, for every long flag: one
destination, one environment variable, one metavar family, one declaration (so one help
meaning) wherever it appears; the older spellings only as hidden aliases from :data:`ALIASES`;
and the README's table of shared names true, command by command.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from cli_helpers import assert_one_error, run, write
from click.testing import CliRunner

from yangkey.cli import main, options
from yangkey.cli.declaration import Declaration, SharedOption
from yangkey.cli.profile import Profile

README = Path(__file__).resolve().parents[2] / "README.md"
IF = "/ietf-interfaces:interfaces/interface"

#: Hidden older spellings (alias, the name it stands for): accepted, never in --help. Nothing
#: else may have two long names.
ALIASES = {
    ("--json", "--format"),
    ("--url", "--schema-registry"),
    ("--kafka-properties", "--consumer-config-file"),
    ("--node", "--override-node"),  # key, keys: it overrides the notification's node
    ("--subscription-id", "--override-subscription-id"),
    ("--node", "--default-node"),  # produce: only for notifications that carry none
    ("--group", "--consumer-group"),  # ingest
    ("--bootstrap", "--address"),  # kafka status: a flag, print the address
    ("--topic", "--store-topic"),  # registry serve
}
#: Short forms that stand for more than one long name: -X is the command's main Kafka client's
#: setting, -o what the command writes (a file or a directory).
SHORT_FORMS = {
    "-X": {"--producer-config", "--consumer-config", "--kafka-config"},
    "-o": {"--output", "--output-dir"},
}


def _commands(
    command: click.Command, ctx: click.Context, path: tuple[str, ...]
) -> Iterator[tuple[str, click.Command]]:
    yield " ".join(path), command
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            assert sub is not None, name
            yield from _commands(sub, click.Context(sub, parent=ctx, info_name=name), (*path, name))


def _tree() -> list[tuple[str, click.Command]]:
    try:
        return list(_commands(main, click.Context(main, info_name="yangkey"), ()))
    except ModuleNotFoundError as exc:  # an edge whose extra is missing (core-only install)
        pytest.skip(f"needs every extra: {exc}")


def _options() -> list[tuple[str, click.Option]]:
    return [
        (name or "yangkey", param)
        for name, command in _tree()
        for param in command.params
        if isinstance(param, click.Option)
    ]


def _canonical(option: click.Option) -> str:
    if isinstance(option, SharedOption):
        return option.declaration.name
    return next(flag for flag in option.opts if flag.startswith("--"))


def _family(option: click.Option) -> str:
    if option.is_flag:
        return "flag"
    if isinstance(option.type, click.Choice):
        return "choice"
    return option.metavar or option.type.name.upper()


def _help_stem(option: SharedOption) -> str:
    return option.declaration.help.split("{what}")[0]


def test_the_tree_is_walked_whole() -> None:
    names = {name for name, _ in _tree()}
    assert {"key", "produce", "ingest", "registry serve", "kafka status", "demo"} <= names
    assert len(_options()) > 200


def test_one_long_flag_one_dest_env_var_metavar_and_declaration() -> None:
    uses: dict[str, list[tuple[str, click.Option]]] = defaultdict(list)
    for command, option in _options():
        if not option.hidden:
            uses[_canonical(option)].append((command, option))
    problems = []
    for flag, found in sorted(uses.items()):
        for what, value in (
            ("dest", lambda o: o.name),
            ("env var", lambda o: o.envvar),
            ("metavar family", _family),
        ):
            seen = {value(option) for _, option in found}
            if len(seen) > 1:
                problems.append(f"{flag}: more than one {what}: {sorted(map(str, seen))}")
        commands = {command for command, _ in found}
        if len(commands) > 1:
            # Taken by several commands: declared once, applied by each.
            declarations = {
                id(option.declaration) if isinstance(option, SharedOption) else None
                for _, option in found
            }
            if len(declarations) > 1 or None in declarations:
                problems.append(f"{flag}: not one declaration ({', '.join(sorted(commands))})")
        for command, option in found:
            if isinstance(option, SharedOption) and not (option.help or "").startswith(
                _help_stem(option)
            ):
                problems.append(f"{command} {flag}: its help is not the declared one")
    assert not problems, "\n".join(problems)


def test_older_spellings_are_hidden_aliases_from_the_table() -> None:
    problems = []
    seen = set()
    for command, option in _options():
        canonical = _canonical(option)
        longs = [flag for flag in option.opts if flag.startswith("--")]
        if option.hidden:
            alias_of = option.declaration.alias_of if isinstance(option, SharedOption) else None
            for flag in longs:
                seen.add((flag, alias_of))
                if (flag, alias_of) not in ALIASES:
                    problems.append(f"{command} {flag}: hidden, not a listed alias")
            continue
        for flag in longs:
            if flag == canonical:
                continue
            seen.add((flag, canonical))
            hidden = isinstance(option, SharedOption) and flag in option.declaration.aliases
            if (flag, canonical) not in ALIASES or not hidden:
                problems.append(f"{command} {canonical}: second name {flag} is not a listed alias")
    assert not problems, "\n".join(problems)
    assert seen == ALIASES  # the table lists no alias that is gone


def test_aliases_stay_out_of_help() -> None:
    for name, command in _tree():
        with click.Context(command, info_name=name or "yangkey") as ctx:
            shown = " ".join(
                record[0]
                for param in command.params
                if (record := param.get_help_record(ctx)) is not None
            )
        for param in command.params:
            if isinstance(param, SharedOption):
                for alias in param.declaration.aliases:
                    assert not re.search(rf"(^|[ ,/]){alias}\b", shown), (name, alias, shown)


def test_every_alias_still_parses_as_the_name_it_stands_for() -> None:
    checked = 0
    for name, command in _tree():
        for param in command.params:
            if not (isinstance(param, SharedOption) and param.declaration.aliases):
                continue
            value = __file__ if isinstance(param.type, click.Path) else "1"
            for alias in param.declaration.aliases:
                args = [alias] if param.is_flag else [alias, value]
                parent = click.Context(main, info_name="yangkey")
                ctx = command.make_context(name, args, parent=parent, resilient_parsing=True)
                expected = True if param.is_flag else param.type_cast_value(ctx, value)
                if param.multiple:
                    expected = (expected,)
                assert ctx.params[param.name or ""] == expected, (name, alias)
                checked += 1
    assert checked >= 10


def test_a_short_form_stands_for_one_long_name() -> None:
    longs: dict[str, set[str]] = defaultdict(set)
    for _, option in _options():
        for flag in option.opts:
            if not flag.startswith("--"):
                longs[flag].add(_canonical(option))
    for short, names in longs.items():
        assert len(names) == 1 or names <= SHORT_FORMS.get(short, set()), (short, names)


def test_a_profile_field_brings_profile_and_profile_fields_are_option_names() -> None:
    fields = {"--" + name.replace("_", "-") for name in Profile.model_fields}
    options_of = {name: {_canonical(p) for p in command.params if isinstance(p, click.Option)}
                  for name, command in _tree()}  # fmt: skip
    for name, flags in options_of.items():
        if name in ("demo", ""):
            continue  # the demo is self-contained; the group passes --profile on
        assert ("--profile" in flags) == bool(flags & fields), name
    assert "--profile" not in options_of["demo"]
    every = set().union(*options_of.values())
    assert fields <= every, fields - every


# --------------------------------------------------------------------- the README's table


def _readme_rows() -> list[tuple[list[str], str, str, str]]:
    text = README.read_text(encoding="utf-8")
    section = text.split("### One set of names", 1)[1].split("\n#", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        if len(cells) != 4 or not cells[0].startswith("`"):
            continue
        option, env, field, commands = cells
        flags = re.findall(r"(--[a-z][a-z-]*)", option)
        rows.append((flags, env, field, commands))
    return rows


def test_the_readme_table_of_shared_names_is_true() -> None:
    rows = _readme_rows()
    assert len(rows) >= 15
    taken: dict[str, set[str]] = defaultdict(set)
    declared: dict[str, click.Option] = {}
    for command, option in _options():
        if not option.hidden:
            taken[_canonical(option)].add(command)
            declared[_canonical(option)] = option
    for flags, env, field, commands in rows:
        assert flags
        # "a, b (a note with [a link](#x)): what it is" -> {a, b}
        names = re.sub(r"\[[^\]]*\]\([^)]*\)", "", commands).split(":")[0]
        listed = {c.strip() for c in re.sub(r"\([^)]*\)", "", names).split(",") if c.strip()}
        for flag in flags:
            assert flag in declared, flag
            option = declared[flag]
            if "<" not in env:  # YANGKEY_KAFKA_<KEY>: a family, read by the Kafka settings
                assert (option.envvar or "") == env.strip("`"), (flag, env)
            if field:
                name = re.findall(r"`(\w+)`", field)[0]
                assert name in Profile.model_fields and flag == "--" + name.replace("_", "-")
            if not commands.startswith("every"):
                assert taken[flag] == listed, (flag, taken[flag] ^ listed)
    # Every option of yangkey.cli.options (the ones several command modules take) is a row.
    named = {flag for flags, *_ in rows for flag in flags}
    shared = {
        declaration.name
        for value in (*vars(options).values(), *options.KAFKA_CLIENT_CONFIG.values())
        for declaration in (value if isinstance(value, tuple) else (value,))
        if isinstance(declaration, Declaration) and declaration.alias_of is None
    }
    assert shared <= named, f"declared in yangkey.cli.options, not in the README: {shared - named}"


# ------------------------------------------------------------------ what the renames mean


@pytest.fixture
def notification(tmp_path: Path) -> str:
    return write(
        tmp_path,
        "n.json",
        '{"ietf-notification:notification": {"eventTime": "2026-11-20T10:00:00Z",'
        ' "ietf-yang-push:push-update": {"id": 7, "datastore-contents": {'
        '"ietf-interfaces:interfaces": {"interface": [{"name": "eth0"}]}}}}}',
    )


def test_key_override_node_and_its_old_spelling(notification: str) -> None:
    new = run("key", "--xpath", IF, "--override-node", "pe1", "--override-subscription-id", "9",
              notification)  # fmt: skip
    old = run("key", "--xpath", IF, "--node", "pe1", "--subscription-id", "9", notification)
    assert new.exit_code == 0, new.output
    assert new.stdout == old.stdout
    assert new.stdout.splitlines()[:2] == ["pe1", "9"]


def test_a_profile_bootstrap_does_not_turn_a_file_into_the_shared_catalog(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # --bootstrap from a profile or the environment is an address; only --shared-catalog (or
    # --bootstrap on the command line, its older meaning) reads the shared catalog.
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("YANGKEY_PROFILE", raising=False)
    monkeypatch.setenv("YANGKEY_BOOTSTRAP", "127.0.0.1:1")
    example = Path(__file__).resolve().parents[2] / "examples" / "subscriptions.yaml"
    write(tmp_path, "yangkey.yaml", f"profiles:\n  default:\n    bootstrap: 127.0.0.1:1\n"
          f"    subscriptions: {example}\n")  # fmt: skip
    shown = run("catalog", "show", "--format", "json")
    assert shown.exit_code == 0, shown.output
    assert '"subscription_id": 1042' in shown.stdout
    generated = run("ddl", "generate", "--mode", "embedded")
    assert generated.exit_code == 0, generated.output
    assert "kafka://" not in generated.stdout


def test_shared_catalog_without_bootstrap_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("YANGKEY_BOOTSTRAP", raising=False)
    for args in (["catalog", "show"], ["ddl", "generate"]):
        result = run(*args, "--shared-catalog")
        assert result.exit_code == 2, (args, result.output)
        assert "--shared-catalog needs --bootstrap" in result.stderr


@pytest.mark.parametrize("flag", ["--address", "--bootstrap"])
def test_kafka_status_address_and_its_old_spelling(tmp_path: Path, flag: str) -> None:
    pytest.importorskip("confluent_kafka")
    result = run("kafka", "status", flag, "--state-dir", str(tmp_path / "none"))
    assert_one_error(result, "no broker running")


def test_a_profile_reaches_the_core_commands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # --yang-dir brings --profile: a profile's yang_dir is where compile, topic, key and keys
    # find the modules, as every other command does.
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("YANGKEY_PROFILE", raising=False)
    monkeypatch.delenv("YANGKEY_PROFILES_FILE", raising=False)
    (tmp_path / "yang").mkdir()
    write(tmp_path, "yang/acme-box.yang", 'module acme-box { yang-version 1.1; namespace '
          '"urn:acme:box"; prefix box; container boxes { list box { key "name"; '
          "leaf name { type string; } } } }\n")  # fmt: skip
    assert run("topic", "--xpath", "/acme-box:boxes/box").exit_code == 1
    write(tmp_path, "yangkey.yaml", "profiles:\n  default:\n    yang_dir: [yang]\n")
    result = run("topic", "--xpath", "/acme-box:boxes/box")
    assert (result.exit_code, result.stdout) == (0, "box-boxes-box\n"), result.output


@pytest.mark.parametrize(
    ("args", "env", "expected"),
    [
        (["--bootstrap", "k:9092"], {}, "k:9092"),  # its older meaning: the shared catalog
        ([], {"YANGKEY_BOOTSTRAP": "k:9092"}, None),  # from the environment: an address
        (["--shared-catalog"], {"YANGKEY_BOOTSTRAP": "k:9092"}, "k:9092"),
        (["--shared-catalog", "-b", "a:1"], {"YANGKEY_BOOTSTRAP": "k:9092"}, "a:1"),
        (["--shared-catalog"], {}, "usage"),
    ],
)
def test_which_bootstrap_reads_the_shared_catalog(
    args: list[str], env: dict[str, str], expected: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("YANGKEY_BOOTSTRAP", raising=False)
    seen: list[str | None] = []

    @click.command()
    @options.SHARED_CATALOG
    @options.BOOTSTRAP.but(required=False, with_profile=False)
    def command(shared_catalog: bool, bootstrap: str | None) -> None:
        seen.append(options.shared_catalog_servers(shared_catalog, bootstrap))

    result = CliRunner().invoke(command, args, env=env)
    if expected == "usage":
        assert result.exit_code == 2 and "--shared-catalog needs --bootstrap" in result.output
    else:
        assert result.exit_code == 0, result.output
        assert seen == [expected]
