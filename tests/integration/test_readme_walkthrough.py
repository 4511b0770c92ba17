"""The README's Walkthrough, run as a new user would: its ```bash blocks, in order, in one
shell, in an empty directory, with a real broker (started by the walkthrough itself), Spark
and chdb. A block that stops working as written fails this test."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"
_BLOCK = re.compile(r"^```bash\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def walkthrough_blocks(text: str) -> list[str]:
    """The ```bash blocks of the "## Walkthrough" section, in order."""
    start = text.index("\n## Walkthrough\n")
    end = text.find("\n## ", start + 1)
    return _BLOCK.findall(text[start : end if end != -1 else None])


def test_the_walkthrough_section_is_found() -> None:
    blocks = walkthrough_blocks(README.read_text(encoding="utf-8"))
    assert len(blocks) >= 5
    script = "\n".join(blocks)
    assert "yangkey kafka start" in script and "yangkey kafka stop" in script
    assert "9092" not in script  # the address comes from the broker, never hard-coded


@pytest.mark.needs("spark")
def test_readme_walkthrough_runs_as_written(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "XDG_STATE_HOME": str(tmp_path / "state"),
    }
    script = "set -euxo pipefail\n" + "\n".join(
        walkthrough_blocks(README.read_text(encoding="utf-8"))
    )
    try:
        result = subprocess.run(
            ["bash", "-c", script],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
    finally:
        # a block that failed before `kafka stop` leaves the broker running: stop it here
        subprocess.run(
            [sys.executable, "-m", "yangkey.cli", "kafka", "stop", "--all"],
            env=env,
            capture_output=True,
            timeout=120,
            check=False,
        )
    assert result.returncode == 0, result.stderr[-4000:]
    assert result.stdout.startswith("wrote subscriptions.yaml")
    assert "pe1.nyc\n1042\n/ietf-interfaces:interfaces/interface[name='" in result.stdout
    # the broker the walkthrough started was stopped by its last block
    stopped = subprocess.run(
        [sys.executable, "-m", "yangkey.cli", "kafka", "status"],
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert stopped.returncode == 1

    # what the walkthrough built is what `yangkey sample --expected` promised
    expected = json.loads((work / "expected.json").read_text())
    state = subprocess.run(
        [sys.executable, "-m", "yangkey.cli", "state", "--embedded", "ch", "--format", "json"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    rows = [json.loads(line) for line in state.stdout.splitlines() if line.strip()]
    keys = {(row["node"], int(row["subscription_id"]), " | ".join(row["xpaths"])) for row in rows}
    promised = {
        (row["node"], row["subscription_id"], row["xpaths"]) for row in expected["current_state"]
    }
    assert keys == promised

    # produce --report: the run's summary; ingest --report: what it stored, charts inlined
    produced = (work / "produce.html").read_text(encoding="utf-8")
    assert "<span>messages produced</span>" in produced and "<script src" not in produced
    page = (work / "report.html").read_text(encoding="utf-8")
    assert page.count('class="yk-chart"') == 7 and "<script src" not in page
    nodes = {node for node, _, _ in promised}
    assert f"<b>{len(nodes)}</b><span>nodes</span>" in page
    assert "<span>messages ingested</span>" in page
