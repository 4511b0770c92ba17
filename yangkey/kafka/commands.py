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
from rich.console import Console

from yangkey.errors import BrokerError, YangkeyError
from yangkey.kafka.broker import DEFAULT_HEAP, EmbeddedKafka
from yangkey.kafka.config import parse_kv
from yangkey.kafka.install import KAFKA_VERSION, install_kafka, installed_jars
from yangkey.kafka.install import kafka_home as cache_home
from yangkey.kafka.process import (
    STATE_FILE,
    BrokerState,
    broker_answers,
    default_state_dir,
    recorded_state_dirs,
    stop_recorded,
)
from yangkey.options import format_option, resolve_format
from yangkey.reporting import fail

_err = Console(stderr=True, highlight=False, soft_wrap=True)  # paths must stay copyable

_state_dir_option = click.option(
    "--state-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help=f"Where the broker is recorded ({STATE_FILE}) and keeps its data [default:"
    " $XDG_STATE_HOME/yangkey/kafka, else ~/.local/state/yangkey/kafka]. Every state dir in use"
    " is registered per user, so status and stop find a broker from any directory; give"
    " different values to run several brokers.",
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
    """Run a real single-node Apache Kafka broker (KRaft) on this machine.

    For development, demos and tests: the broker listens on 127.0.0.1 only, has no
    security, replication factor 1, auto topic creation off and a log cleaner tuned so
    compaction shows within seconds. Needs Java 17+. Kafka's jars come from an unpacked Kafka
    distribution when you name one (--kafka-home or $KAFKA_HOME), else they are downloaded
    from Maven Central on first use (pinned, checksummed; no Maven needed) and cached in
    $YANGKEY_CACHE (default ~/.cache/yangkey).

    \b
    Typical session (from any directory: brokers are recorded per user):
      yangkey kafka start            # prints 127.0.0.1:PORT
      yangkey kafka status --bootstrap
      yangkey kafka stop             # also deletes the broker's data
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
    ahead of time. Does nothing when the cache is already complete. Each jar is checked
    against the SHA-256 that yangkey pins; no Maven needed.

    \b
    Examples:
      yangkey kafka install
      YANGKEY_CACHE=/opt/cache yangkey kafka install
    """
    with _friendly():
        ready = installed_jars(kafka_version)
        if ready is None:
            with _err.status(f"downloading Kafka {kafka_version}…") as status:
                ready = install_kafka(kafka_version, progress=status.update)
            _err.print(f"installed Kafka {kafka_version} into {cache_home(kafka_version)}")
        click.echo(str(ready))


@kafka.command()
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    help="Client port on 127.0.0.1; 0 picks a free one (the address is printed).",
)
@click.option(
    "--foreground",
    is_flag=True,
    help="Stay attached: run until Ctrl-C (or SIGTERM), then stop the broker.",
)
@_state_dir_option
@click.option(
    "--set",
    "settings",
    multiple=True,
    metavar="KEY=VALUE",
    help="Override a server.properties entry, e.g. --set log.retention.hours=1. Repeatable.",
)
@click.option(
    "--heap", default=DEFAULT_HEAP, show_default=True, help="JVM maximum heap (-Xmx) of the broker."
)
@click.option(
    "--timeout",
    type=float,
    default=120.0,
    show_default=True,
    help="Seconds to wait for the broker to answer before giving up.",
)
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
    heap: str,
    timeout: float,
    keep_data: bool,
) -> None:
    """Start the broker and print its bootstrap address (127.0.0.1:PORT).

    By default the broker keeps running in the background after this command returns and
    is recorded for this user: `yangkey kafka status --bootstrap` prints its address and
    `yangkey kafka stop` stops it, from any directory. Each start begins with an empty broker:
    topics do not survive a stop. The broker log is <state-dir>/data/broker.log.

    \b
    Examples:
      export BOOTSTRAP=$(yangkey kafka start)
      yangkey kafka start --port 9092 --set num.partitions=6
      yangkey kafka start --foreground        # Ctrl-C stops it
    """
    with _friendly():
        state_dir = (state_dir or default_state_dir()).resolve()
        properties = parse_kv(settings, source="--set")
        recorded = BrokerState.read(state_dir)
        if recorded is not None and recorded.alive():
            raise click.ClickException(
                f"a broker is already running on {recorded.bootstrap} (pid {recorded.pid});"
                f" `{_stop_hint(state_dir)}` first"
            )
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
        )
        if kafka_home is None and installed_jars(broker.version) is None:
            with _err.status(f"downloading Kafka {broker.version}…") as status:
                install_kafka(broker.version, progress=status.update)
        with _err.status(f"starting Kafka {broker.version}…"):
            broker.start()
        _err.print(
            f"Kafka {broker.version} on {broker.bootstrap} (pid {broker.pid},"
            f" up in {broker.startup_seconds:.1f}s), log {broker.log_path}"
        )
        click.echo(broker.bootstrap)
        if foreground:
            _run_in_foreground(broker)
        else:
            broker.detach()
            _err.print(f"running in the background; stop with `{_stop_hint(state_dir)}`")


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
        raise click.ClickException(f"the broker exited by itself (code {code}):\n{tail}")
    _err.print("stopped")


@kafka.command()
@_state_dir_option
@click.option("--all", "stop_all", is_flag=True, help="Stop every broker recorded for this user.")
@click.option(
    "--timeout",
    type=float,
    default=30.0,
    show_default=True,
    help="Seconds to wait for a clean shutdown before SIGKILL.",
)
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
            was_running = state.alive()
            stop_recorded(target, timeout=timeout)
            if not was_running:
                raise BrokerError(
                    f"nothing to stop: the broker recorded in {target} (pid {state.pid}) had"
                    " already exited; its record is cleared",
                    source="kafka stop",
                )
            _err.print(f"stopped Kafka on {state.bootstrap} (pid {state.pid})")


STATUS_FORMATS = ("text", "json")


@kafka.command()
@_state_dir_option
@click.option(
    "--bootstrap",
    "bootstrap_only",
    is_flag=True,
    help="Print only the HOST:PORT of the running broker (the default one, or the only one"
    " recorded); exit 1 with one error line when none answers.",
)
@format_option(STATUS_FORMATS)
def status(state_dir: Path | None, bootstrap_only: bool, fmt: str | None) -> None:
    """List the brokers recorded for this user; exit status 0 only if they all answer.

    One line per broker on stderr (version, pid, state dir, log); the bootstrap address of
    each broker that answers on stdout, so `yangkey kafka status` is both a check and a way
    to find the address. With --state-dir only that broker is shown.

    \b
    Examples:
      yangkey kafka status
      export BOOTSTRAP=$(yangkey kafka status --bootstrap)
      yangkey kafka status --format json
    """
    as_json = resolve_format(fmt, STATUS_FORMATS) == "json"
    with _friendly():
        if bootstrap_only:
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
        alive = state is not None and state.alive()
        answers = alive and state is not None and broker_answers(state.bootstrap, timeout=5.0)
        all_answer = all_answer and answers
        entry: dict[str, object] = {"state_dir": str(target), "running": alive, "answers": answers}
        if state is not None:
            entry.update(json.loads(state.to_json()))
        listed.append(entry)
        if as_json:
            continue
        if state is None:
            _err.print(f"not running (no {STATE_FILE} in {target})")
        elif not alive:
            _err.print(f"not running: pid {state.pid} has exited (log: {state.log})")
        elif not answers:
            _err.print(f"pid {state.pid} is running but {state.bootstrap} does not answer")
        else:
            _err.print(
                f"Kafka {state.version} running, pid {state.pid}, state dir {target},"
                f" log {state.log}"
            )
            click.echo(state.bootstrap)
    if as_json:
        click.echo(json.dumps(listed, indent=2))
    elif not found:
        _err.print(f"no broker recorded (state dir {default_state_dir()})")
    sys.exit(0 if all_answer else 1)


if __name__ == "__main__":  # scripts/kafka.sh, before the main CLI registers the group
    kafka()
