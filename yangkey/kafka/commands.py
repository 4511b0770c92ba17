"""``yangkey kafka …``: install, start, inspect and stop the local development broker.

stdout carries only the answer a script wants (the bootstrap address, a path, JSON);
progress and explanations go to stderr, so ``BOOTSTRAP=$(yangkey kafka start)`` works.
"""

from __future__ import annotations

import json
import shutil
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

import click
from click.core import ParameterSource
from rich.console import Console

from yangkey.cli.declaration import Declaration
from yangkey.cli.options import (
    PORT,
    format_option,
    resolve_format,
)
from yangkey.cli.reporting import fail
from yangkey.errors import BrokerError, YangkeyError
from yangkey.inspection.commands import topics
from yangkey.kafka.broker import CLUSTER_HEAP, DEFAULT_HEAP, MAX_BROKERS, EmbeddedKafka
from yangkey.kafka.config import parse_kv
from yangkey.kafka.install import KAFKA_VERSION, install_kafka, installed_jars, terminal_progress
from yangkey.kafka.install import kafka_home as cache_home
from yangkey.kafka.process import (
    STATE_FILE,
    BrokerState,
    broker_answers,
    default_state_dir,
    recorded_state_dirs,
    stop_recorded,
)

_err = Console(stderr=True, highlight=False, soft_wrap=True)  # paths must stay copyable

STATE_DIR = Declaration(
    ("--state-dir",),
    "state_dir",
    f"Where the broker is recorded ({STATE_FILE}) and keeps its data [default:"
    " $XDG_STATE_HOME/yangkey/kafka, else ~/.local/state/yangkey/kafka]. Every state dir in use"
    " is registered per user, so status and stop find a broker from any directory; give"
    " different values to run several brokers.",
    metavar="DIR",
    attrs={"type": click.Path(file_okay=False, path_type=Path), "default": None},
)
TIMEOUT = Declaration(
    ("--timeout",),
    "timeout",
    "Seconds to wait",
    metavar="SECONDS",
    attrs={"type": float, "show_default": True},
)
ADDRESS = Declaration(
    ("--address",),
    "address",
    "Print only the HOST:PORT of the running broker (the default one, or the only one"
    " recorded; a cluster: HOST:PORT,HOST:PORT,…); exit 1 with one error line when none"
    " answers.",
    aliases=("--bootstrap",),
    attrs={"is_flag": True},
)


def _target(state_dir: Path | None, command: str) -> Path:
    """The state dir a command acts on: the one named, else the default one when it holds a
    broker or nothing else does, else the only one recorded."""
    if state_dir is not None:
        return state_dir.resolve()
    default = default_state_dir().resolve()
    recorded = recorded_state_dirs()
    if not recorded or recorded[0] == default:
        return default
    if len(recorded) == 1:
        return recorded[0]
    raise BrokerError(
        f"{len(recorded)} brokers are recorded; name one with --state-dir: "
        + ", ".join(str(d) for d in recorded),
        source=f"kafka {command}",
    )


def _stop_hint(state_dir: Path) -> str:
    if state_dir == default_state_dir().resolve():
        return "yangkey kafka stop"
    return f"yangkey kafka stop --state-dir {state_dir}"


@contextmanager
def _friendly() -> Iterator[None]:
    """Turn yangkey's own errors into one ``error: …`` line and exit status 1."""
    try:
        yield
    except YangkeyError as exc:
        fail(exc)


@click.group(name="kafka")
def kafka() -> None:
    """Run a real Apache Kafka broker (KRaft) on this machine, or a small cluster of them.

    For development, demos and tests: the broker listens on 127.0.0.1 only, has no
    security, auto topic creation off and a log cleaner tuned so compaction shows within
    seconds. One broker replicates nothing; `start --brokers 3` runs a three-node cluster
    replicated like production (3 replicas, min.insync.replicas 2). Needs Java 17+. Kafka's
    jars come from an unpacked Kafka distribution when you name one (--kafka-home or
    $KAFKA_HOME), else they are downloaded from Maven Central on first use (pinned,
    checksummed; no Maven needed) and cached in $YANGKEY_CACHE (default ~/.cache/yangkey).

    \b
    Typical session (from any directory: brokers are recorded per user):
      yangkey kafka start            # prints 127.0.0.1:PORT
      yangkey kafka status --address
      yangkey kafka stop             # also deletes the broker's data
      yangkey kafka start --brokers 3   # prints 127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3
    """


@kafka.command()
@click.option(
    "--kafka-version",
    default=KAFKA_VERSION,
    show_default=True,
    help="Apache Kafka version whose pinned jars to download (org.apache.kafka:kafka_2.13).",
)
def install(kafka_version: str) -> None:
    """Download Kafka's jars from Maven Central into the cache, then print their directory.

    Needed once; `start` does it on demand, so this is for warming a machine or CI cache
    ahead of time. Does nothing when the cache is already complete. 46 jars (45 MB) are
    downloaded eight at a time with a progress bar, each checked against the SHA-256 that
    yangkey pins; no Maven or JVM runs. The repository is $YANGKEY_MAVEN_REPOSITORY, else the
    mirror of central in ~/.m2/settings.xml, else Maven Central as the installed Maven (mvn)
    or the Apache Ivy inside pyspark names it.

    \b
    Examples:
      yangkey kafka install
      YANGKEY_CACHE=/opt/cache yangkey kafka install
      YANGKEY_MAVEN_REPOSITORY=https://maven-mirror.example.com/maven2 yangkey kafka install
    """
    with _friendly():
        ready = installed_jars(kafka_version)
        if ready is None:
            with terminal_progress(f"Kafka {kafka_version}") as progress:
                ready = install_kafka(kafka_version, progress=progress)
            _err.print(f"installed Kafka {kafka_version} into {cache_home(kafka_version)}")
        click.echo(str(ready))


@kafka.command()
@PORT.but(default=0, note="The broker's client port, on 127.0.0.1 (the address is printed).")
@click.option(
    "--foreground",
    is_flag=True,
    help="Stay attached: run until Ctrl-C (or SIGTERM), then stop the broker.",
)
@STATE_DIR
@click.option(
    "--set",
    "settings",
    multiple=True,
    metavar="KEY=VALUE",
    help="Override a server.properties entry, e.g. --set log.retention.hours=1. Repeatable.",
)
@click.option(
    "--brokers",
    type=click.IntRange(1, MAX_BROKERS),
    default=1,
    show_default=True,
    help="Nodes in the cluster (combined KRaft broker+controller, static quorum), on the"
    " client ports from --port on. From 3 on, topics and Kafka's internal topics default to 3"
    " replicas with min.insync.replicas 2 (2 brokers: 2 and 1), as production clusters are set"
    " up: to see what yangkey does when a broker dies.",
)
@click.option(
    "--heap",
    default=None,
    help=f"JVM maximum heap (-Xmx) of each broker [default: {DEFAULT_HEAP}, {CLUSTER_HEAP} per"
    " node of a cluster].",
)
@TIMEOUT.but(default=120.0, note="for the broker to answer before giving up.")
@click.option(
    "--keep-data",
    is_flag=True,
    help="Do not delete the data dir on stop (to inspect logs and segments afterwards).",
)
@click.option(
    "--kafka-home",
    type=click.Path(file_okay=False, path_type=Path),
    envvar="KAFKA_HOME",
    help="An unpacked Apache Kafka 4.x distribution to run instead of the pinned download"
    " [env: KAFKA_HOME].",
)
def start(
    *,
    kafka_home: Path | None,
    port: int,
    foreground: bool,
    state_dir: Path | None,
    settings: tuple[str, ...],
    brokers: int,
    heap: str | None,
    timeout: float,
    keep_data: bool,
) -> None:
    """Start the broker and print its bootstrap address (127.0.0.1:PORT).

    By default the broker keeps running in the background after this command returns and
    is recorded for this user: `yangkey kafka status --address` prints its address and
    `yangkey kafka stop` stops it, from any directory. Each start begins with an empty broker:
    topics do not survive a stop. The broker log is <state-dir>/data/broker.log. When the
    broker is already running, it prints its address again and exits 0 (asking for another
    port, size or --foreground is an error: stop it first).

    With --brokers N, N nodes form one cluster (the address printed lists them all,
    127.0.0.1:P1,127.0.0.1:P2,…); node I keeps its data and log in
    <state-dir>/data/node-I. Topics yangkey creates take the cluster's default replication;
    stop a node's process to see a broker fail, `yangkey kafka stop` stops them all.

    \b
    Examples:
      export BOOTSTRAP=$(yangkey kafka start)
      yangkey kafka start --port 9092 --set num.partitions=6
      yangkey kafka start --brokers 3         # three nodes, 3 replicas, min.insync.replicas 2
      yangkey kafka start --foreground        # Ctrl-C stops it
    """
    with _friendly():
        state_dir = (state_dir or default_state_dir()).resolve()
        properties = parse_kv(settings, source="--set")
        recorded = BrokerState.read(state_dir)
        if recorded is not None and recorded.alive():
            _already_running(recorded, state_dir, port=port, brokers=brokers, fg=foreground)
            return
        if recorded is not None:
            stop_recorded(state_dir)  # a crashed broker: clear its state file and data
        data_dir = state_dir / "data"
        if data_dir.exists():
            # <state-dir>/data belongs to this command; nothing runs on it (checked above).
            shutil.rmtree(data_dir)
        broker = EmbeddedKafka(
            port=port,
            properties=properties,
            data_dir=data_dir,
            keep=keep_data,
            state_dir=state_dir,
            heap=heap,
            startup_timeout=timeout,
            die_with_parent=foreground,  # a killed foreground command takes its broker along
            kafka_home=kafka_home,
            brokers=brokers,
        )
        if kafka_home is None and installed_jars(broker.version) is None:
            with terminal_progress(f"Kafka {broker.version}") as progress:
                install_kafka(broker.version, progress=progress)
        what = f"Kafka {broker.version}" + (f", {brokers} brokers," if brokers > 1 else "")
        with _err.status(f"starting {what}…"):
            broker.start()
        pids = ", ".join(str(node.pid) for node in broker.nodes)
        logs = broker.log_path if brokers == 1 else broker.data_dir / "node-*" / "broker.log"
        _err.print(
            f"{what} on {broker.bootstrap} (pid {pids}, up in {broker.startup_seconds:.1f}s),"
            f" log {logs}"
        )
        click.echo(broker.bootstrap)
        if foreground:
            _run_in_foreground(broker)
        else:
            broker.detach()
            _err.print(f"running in the background; stop with `{_stop_hint(state_dir)}`")


def _already_running(
    recorded: BrokerState, state_dir: Path, *, port: int, brokers: int, fg: bool
) -> None:
    """A second ``kafka start`` prints the running broker's address and succeeds, so
    ``BOOTSTRAP=$(yangkey kafka start)`` works every time; asking for another broker (a port,
    a size, the foreground) than the one running is an error."""
    given = click.get_current_context().get_parameter_source
    ports = {address.rpartition(":")[2] for address in recorded.bootstrap.split(",")}
    differs = (
        fg
        or (port != 0 and str(port) not in ports)
        or (given("brokers") is not ParameterSource.DEFAULT and len(recorded.members()) != brokers)
    )
    if differs:
        raise BrokerError(
            f"a broker is already running on {recorded.bootstrap} (pid {recorded.pid});"
            f" `{_stop_hint(state_dir)}` first",
            source="kafka start",
        )
    _err.print(
        f"Kafka {recorded.version} is already running on {recorded.bootstrap}"
        f" (pid {recorded.pid}); stop with `{_stop_hint(state_dir)}`"
    )
    click.echo(recorded.bootstrap)


def _run_in_foreground(broker: EmbeddedKafka) -> None:
    def on_term(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, on_term)
    code: int | None = None
    try:
        _err.print("press Ctrl-C to stop")
        code = broker.wait()
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        tail = broker.log_tail() if code is not None else ""
        with _err.status("stopping Kafka…"):
            broker.stop()
    if code is not None:
        raise BrokerError(
            f"the broker exited by itself (code {code}):\n{tail}", source="kafka start"
        )
    _err.print("stopped")


@kafka.command()
@STATE_DIR
@click.option("--all", "stop_all", is_flag=True, help="Stop every broker recorded for this user.")
@TIMEOUT.but(default=30.0, note="for a clean shutdown before SIGKILL.")
def stop(state_dir: Path | None, stop_all: bool, timeout: float) -> None:
    """Stop the recorded broker and delete its data (unless it was started with --keep-data).

    Works from any directory: without --state-dir it stops the broker in the default state
    dir, or the only one recorded. Sends SIGTERM (Kafka shuts down cleanly), then SIGKILL
    after --timeout. Exits 1 with one error line when there is nothing to stop (in a cleanup
    script: `yangkey kafka stop || true`).

    \b
    Examples:
      yangkey kafka stop
      yangkey kafka stop --state-dir /tmp/broker2
      yangkey kafka stop --all
    """
    with _friendly():
        if stop_all and state_dir is not None:
            raise click.UsageError("give --state-dir or --all, not both")
        targets = recorded_state_dirs() if stop_all else [_target(state_dir, "stop")]
        if not targets:
            raise BrokerError("no broker recorded", source="kafka stop")
        for target in targets:
            state = BrokerState.read(target)
            if state is None:
                raise BrokerError(f"no broker recorded in {target}", source="kafka stop")
            running = state.running()
            stop_recorded(target, timeout=timeout)
            if not running:
                raise BrokerError(
                    f"nothing to stop: the broker recorded in {target} (pid {state.pid}) had"
                    " already exited; its record is cleared",
                    source="kafka stop",
                )
            pids = ", ".join(str(node.pid) for node in running)
            _err.print(f"stopped Kafka on {state.bootstrap} (pid {pids})")


STATUS_FORMATS = ("text", "json")


@kafka.command()
@STATE_DIR
@ADDRESS
@format_option(STATUS_FORMATS)
def status(state_dir: Path | None, address: bool, fmt: str | None) -> None:
    """List the brokers recorded for this user; exit status 0 only if they all answer.

    One line per broker on stderr (version, pid, state dir, log; a cluster's nodes that are
    down, each on a line of its own); the bootstrap address of each broker that answers on
    stdout, so `yangkey kafka status` is both a check and a way to find the address. A
    cluster with a node down exits 1. With --state-dir only that broker is shown.

    \b
    Examples:
      yangkey kafka status
      export BOOTSTRAP=$(yangkey kafka status --address)
      yangkey kafka status --format json
    """
    as_json = resolve_format(fmt, STATUS_FORMATS) == "json"
    with _friendly():
        if address:
            target = _target(state_dir, "status")
            state = BrokerState.read(target)
            if state is None or not state.alive():
                raise BrokerError(
                    f"no broker running (state dir {target}); start one with `yangkey kafka start`",
                    source="kafka status",
                )
            if not broker_answers(state.bootstrap, timeout=5.0):
                raise BrokerError(
                    f"pid {state.pid} is running but {state.bootstrap} does not answer",
                    source="kafka status",
                )
            click.echo(state.bootstrap)
            return
        targets = [state_dir.resolve()] if state_dir is not None else recorded_state_dirs()
        found = [(target, BrokerState.read(target)) for target in targets]
    listed: list[dict[str, object]] = []
    all_answer = bool(found)
    for target, state in found:
        entry, answers = _status_of(target, state, quiet=as_json)
        all_answer = all_answer and answers
        listed.append(entry)
    if as_json:
        click.echo(json.dumps(listed, indent=2))
    elif not found:
        _err.print(f"no broker recorded (state dir {default_state_dir()})")
    sys.exit(0 if all_answer else 1)


def _status_of(
    target: Path, state: BrokerState | None, *, quiet: bool
) -> tuple[dict[str, object], bool]:
    """A recorded broker's JSON entry and whether all of it answers; unless ``quiet`` its
    line on stderr and, when it answers, its address on stdout."""
    members = state.members() if state is not None else ()
    down = [node for node in members if not node.alive()]
    alive = len(down) < len(members)
    answers = (
        alive
        and state is not None
        and broker_answers(state.bootstrap, timeout=5.0, brokers=len(members) - len(down))
    )
    entry: dict[str, object] = {"state_dir": str(target), "running": alive, "answers": answers}
    if state is not None:
        entry.update(json.loads(state.to_json()))
        entry["nodes_down"] = [node.node_id for node in down]
    if quiet:
        return entry, answers and not down
    if state is None:
        _err.print(f"not running (no {STATE_FILE} in {target})")
    elif not alive:
        _err.print(f"not running: pid {state.pid} has exited (log: {state.log})")
    elif not answers:
        _err.print(f"pid {state.pid} is running but {state.bootstrap} does not answer")
    elif len(members) == 1:
        _err.print(
            f"Kafka {state.version} running, pid {state.pid}, state dir {target}, log {state.log}"
        )
    else:
        pids = ", ".join(str(node.pid) for node in members if node not in down)
        _err.print(
            f"Kafka {state.version} cluster running, {len(members) - len(down)} of"
            f" {len(members)} brokers (pid {pids}), state dir {target},"
            f" logs {Path(state.data_dir) / 'node-*' / 'broker.log'}"
        )
        for node in down:
            _err.print(f"node {node.node_id} is down: pid {node.pid} has exited (log: {node.log})")
    if answers:
        click.echo(state.bootstrap if state is not None else "")
    return entry, answers and not down


kafka.add_command(topics)


if __name__ == "__main__":  # scripts/kafka.sh, before the main CLI registers the group
    kafka()
