"""What a benchmark's processes cost, read from /proc (Linux): CPU seconds of a process tree,
peak and proportional resident sets of the Spark job's processes while it runs."""

from __future__ import annotations

import os
import resource
import threading


def process_cpu() -> dict[int, tuple[int, float]]:
    """{pid: (parent pid, CPU seconds incl. reaped children)} of every process (Linux)."""
    tick = os.sysconf("SC_CLK_TCK")
    found: dict[int, tuple[int, float]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        cpu = sum(int(f) for f in fields[11:15]) / tick
        found[int(entry)] = (int(fields[1]), cpu)
    return found


def tree_cpu(root: int | None, table: dict[int, tuple[int, float]] | None = None) -> float:
    """CPU seconds of process ``root`` and its descendants (0 when unknown), from ``table``
    (:func:`process_cpu`) or a fresh reading."""
    table = process_cpu() if table is None else table
    if root is None or root not in table:
        return 0.0
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in table.items():
        children.setdefault(parent, []).append(pid)
    total = 0.0
    pending = [root]
    while pending:
        pid = pending.pop()
        total += table[pid][1]
        pending.extend(children.get(pid, []))
    return total


def job_and_broker_cpu(broker_pid: int | None) -> tuple[float, float]:
    """CPU seconds of this process tree without the broker's (this process, the JVM and its
    Python workers, a plain loop's librdkafka threads), and of the broker's; one reading."""
    table = process_cpu()
    broker = tree_cpu(broker_pid, table)
    return tree_cpu(os.getpid(), table) - broker, broker


def peak_rss(pid: int) -> tuple[str, int] | None:
    """(role, peak resident set in kB: ``VmHWM``) of a live process; None once it is gone.
    Roles: ``jvm`` (the Spark driver), ``worker`` (a Python worker or the worker daemon it
    forks from), ``other``."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as text:
            command = text.read().replace(b"\0", b" ")
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as status:
            hwm = next((line for line in status if line.startswith("VmHWM:")), "")
    except OSError:
        return None
    if not hwm:
        return None
    kb = int(hwm.split()[1])
    if b"java" in command.split(b" ", 1)[0]:
        return "jvm", kb
    if b"python" in command and b"daemon" in command:
        return "worker", kb
    return "other", kb


def proportional_kb(pid: int) -> int:
    """The process's proportional set size in kB now (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", encoding="ascii", errors="replace") as rollup:
            return next((int(line.split()[1]) for line in rollup if line.startswith("Pss:")), 0)
    except OSError:
        return 0


class RssSampler:
    """Peak RSS of the Spark job's processes while it runs: this process's descendants but
    the broker's, read every ``every`` seconds (a worker's VmHWM is its peak so far, so a
    sample shortly before it ends holds its peak). Forked workers share the daemon's pages
    until written: RSS counts them in each worker, as ``ps`` does."""

    def __init__(self, exclude: int | None, every: float = 0.1) -> None:
        self.exclude = exclude
        self.every = every
        self.peaks: dict[int, tuple[str, int]] = {}
        self.pss: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="rss-sampler", daemon=True)

    def _descendants(self) -> list[int]:
        table = process_cpu()
        children: dict[int, list[int]] = {}
        for pid, (parent, _) in table.items():
            children.setdefault(parent, []).append(pid)
        found, pending = [], list(children.get(os.getpid(), []))
        while pending:
            pid = pending.pop()
            if pid == self.exclude:
                continue
            found.append(pid)
            pending.extend(children.get(pid, []))
        return found

    def _loop(self) -> None:
        while not self._stop.is_set():
            for pid in self._descendants():
                seen = peak_rss(pid)
                if seen is not None and seen[1] >= self.peaks.get(pid, ("", 0))[1]:
                    self.peaks[pid] = seen
                if seen is not None and seen[0] == "worker":
                    self.pss[pid] = max(self.pss.get(pid, 0), proportional_kb(pid))
            self._stop.wait(self.every)

    def peak_pss(self) -> float:
        """The largest proportional set size (shared pages divided among their sharers) of a
        worker seen, in MB: what a worker adds to the daemon it forked from."""
        return max(self.pss.values(), default=0) / 1024

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()

    def peak(self, role: str) -> tuple[float, int]:
        """(the largest peak RSS in MB of processes in ``role``, how many there were)."""
        sizes = [kb for r, kb in self.peaks.values() if r == role]
        return (max(sizes) / 1024 if sizes else 0.0), len(sizes)


def driver_rss_mb() -> float:
    """This process's peak RSS in MB (it also holds the plain loop's pre-computed messages)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
