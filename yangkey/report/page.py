"""One self-contained HTML page for a :class:`~yangkey.report.data.Report`.

The charts are plotly figures; plotly.js (the copy the ``plotly`` package ships) is inlined once
in the page, so it opens anywhere without a network: no CDN, no font or MathJax download. The
figures are written as JSON and drawn by ``Plotly.newPlot`` on load; every chart's ``div`` has
the class ``yk-chart`` (the browser test counts them).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go
from plotly.offline import get_plotlyjs

from yangkey.report.data import Report

__all__ = ["render"]

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 24px;
       color: #1f2933; background: #fafbfc; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 28px 0 8px; }
.meta { color: #616e7c; font-size: 13px; }
.figures { display: flex; flex-wrap: wrap; gap: 10px; margin: 16px 0; }
.figure { background: #fff; border: 1px solid #e4e7eb; border-radius: 6px; padding: 8px 14px; }
.figure b { display: block; font-size: 20px; } .figure span { color: #616e7c; font-size: 12px; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(520px, 1fr)); gap: 16px; }
.card { background: #fff; border: 1px solid #e4e7eb; border-radius: 6px; padding: 10px; }
.yk-chart { width: 100%; height: 360px; }
table { border-collapse: collapse; font-size: 13px; width: 100%; }
th, td { text-align: left; padding: 3px 8px; border-bottom: 1px solid #e4e7eb; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.empty, .notes { color: #616e7c; font-size: 13px; }
"""

LAYOUT: dict[str, Any] = {
    "margin": {"l": 60, "r": 20, "t": 40, "b": 60},
    "template": "plotly_white",
    "legend": {"orientation": "h"},
}


#: Topic names are long: on the vertical axis, read left to right, first topic on top.
TOPIC_AXIS: dict[str, Any] = {"yaxis": {"automargin": True, "autorange": "reversed"}}


class _Page:
    def __init__(self) -> None:
        self.parts: list[str] = []
        self.charts: list[tuple[str, str]] = []

    def chart(self, figure: go.Figure, title: str, height: int = 360) -> str:
        figure.update_layout(title={"text": title, "font": {"size": 14}}, **LAYOUT)
        # below the x axis by the same pixels whatever the chart's height
        figure.update_layout(legend={"y": -min(0.25, 70 / height), "yanchor": "top"})
        div = f"yk-chart-{len(self.charts) + 1}"
        # a topic name or a rejection reason may hold "</script>": keep it inside the string
        self.charts.append((div, figure.to_json().replace("</", "<\\/")))
        return (
            f'<div class="card"><div id="{div}" class="yk-chart" style="height: {height}px">'
            "</div></div>"
        )


def _table(header: Sequence[str], rows: Sequence[Sequence[object]], numeric: set[int]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="n">{html.escape(_number(v))}</td>'
            if i in numeric
            else f"<td>{html.escape(str(v))}</td>"
            for i, v in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f'<div class="card"><table><tr>{head}</tr>{body}</table></div>'


def _number(value: object) -> str:
    if isinstance(value, float):
        return f"{value:,.3f}".rstrip("0").rstrip(".") if value < 100 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _height(topics: int, bars: int) -> int:
    """Pixels for a horizontal bar chart of ``bars`` bars per topic."""
    return max(360, 140 + topics * (12 * bars + 18))


def _empty(text: str) -> str:
    return f'<p class="empty">{html.escape(text)}</p>'


def _partitions(page: _Page, report: Report) -> str:
    if not report.partitions:
        return _empty("No messages per partition in this source.")
    figure = go.Figure()
    by_partition: dict[int, list[tuple[str, int]]] = {}
    for topic, partition, messages in report.partitions:
        by_partition.setdefault(partition, []).append((topic, messages))
    for partition, values in sorted(by_partition.items()):
        figure.add_bar(
            name=f"partition {partition}",
            y=[t for t, _ in values],
            x=[m for _, m in values],
            orientation="h",
        )
    figure.update_layout(barmode="group", **TOPIC_AXIS)
    loads = report.partition_loads()
    histogram = go.Figure(go.Histogram(x=loads, xbins={"size": 0.1}, marker_color="#3e7cb1"))
    histogram.update_layout(
        xaxis={"title": "messages / topic mean (1.0 = even)"}, yaxis={"title": "partitions"}
    )
    skew = report.skew()
    rows = [(s.topic, s.partitions, s.messages, s.largest, s.mean, s.ratio) for s in skew]
    return (
        '<div class="grid">'
        + page.chart(
            figure, "Messages per topic and partition", _height(len(skew), len(by_partition))
        )
        + page.chart(histogram, "Partition load, every partition of every topic")
        + "</div>"
        + _table(
            ("topic", "partitions", "messages", "largest", "mean", "skew (largest / mean)"),
            rows,
            {1, 2, 3, 4, 5},
        )
    )


def _keys_and_nodes(page: _Page, report: Report) -> str:
    parts = []
    if report.keys:
        figure = go.Figure()
        topics = [t for t, _, _ in report.keys]
        figure.add_bar(name="messages", y=topics, x=[m for _, m, _ in report.keys], orientation="h")
        if any(k for _, _, k in report.keys):
            figure.add_bar(
                name="distinct keys", y=topics, x=[k for _, _, k in report.keys], orientation="h"
            )
        figure.update_layout(barmode="group", **TOPIC_AXIS)
        parts.append(
            page.chart(
                figure, "Messages and distinct message keys per topic", _height(len(topics), 2)
            )
        )
    if report.nodes:
        figure = go.Figure()
        by_sub: dict[int, list[tuple[str, int]]] = {}
        for node, sub, messages in report.nodes:
            by_sub.setdefault(sub, []).append((node, messages))
        for sub, values in sorted(by_sub.items()):
            figure.add_bar(
                name=f"subscription {sub}", x=[n for n, _ in values], y=[m for _, m in values]
            )
        figure.update_layout(barmode="stack")
        parts.append(page.chart(figure, "Messages per node and subscription"))
    if not parts:
        return _empty("No keys or nodes in this source (it holds no stored messages).")
    return '<div class="grid">' + "".join(parts) + "</div>"


def _dead_letters(page: _Page, report: Report) -> str:
    if not report.dead_letters:
        return _empty("None: every notification was keyed and every message stored.")
    figure = go.Figure()
    by_topic: dict[str, list[tuple[str, int]]] = {}
    for kind, topic, messages in report.dead_letters:
        by_topic.setdefault(topic, []).append((kind, messages))
    for topic, values in sorted(by_topic.items()):
        figure.add_bar(name=topic, x=[k for k, _ in values], y=[m for _, m in values])
    figure.update_layout(barmode="stack")
    reasons = _table(("kind", "reason", "messages"), report.reasons, {2}) if report.reasons else ""
    return (
        '<div class="grid">'
        + page.chart(figure, "Dead letters and unstored messages by kind")
        + reasons
        + "</div>"
    )


def _throughput(page: _Page, report: Report) -> str:
    if not report.throughput:
        return _empty("No timed messages in this source.")
    figure = go.Figure()
    stages: dict[str, list[tuple[Any, float]]] = {}
    for stage, at, rate in report.throughput:
        stages.setdefault(stage, []).append((at, rate))
    for stage, points in stages.items():
        figure.add_scatter(
            name=stage, x=[a for a, _ in points], y=[r for _, r in points], mode="lines+markers"
        )
    figure.update_layout(yaxis={"title": "messages per second"})
    return page.chart(figure, "Throughput over the run")


def _latency(page: _Page, report: Report) -> str:
    if not report.latency:
        return _empty("No latency: the source has no stored messages with their timestamps.")
    figure = go.Figure()
    for label, attribute in (("p50", "p50"), ("p90", "p90"), ("p99", "p99"), ("max", "worst")):
        figure.add_bar(
            name=label,
            x=[lat.stage for lat in report.latency],
            y=[getattr(lat, attribute) for lat in report.latency],
        )
    # log scale: seconds of ingest next to an hour of device clock both stay readable
    figure.update_layout(barmode="group", yaxis={"title": "seconds", "type": "log"})
    rows = [
        (lat.stage, lat.messages, lat.p50, lat.p90, lat.p99, lat.worst) for lat in report.latency
    ]
    return (
        '<div class="grid">'
        + page.chart(figure, "Latency percentiles (seconds)")
        + _table(("stage", "messages", "p50 s", "p90 s", "p99 s", "max s"), rows, {1, 2, 3, 4, 5})
        + "</div>"
    )


def render(report: Report) -> str:
    """The HTML page of ``report``."""
    page = _Page()
    sections = [
        ("Records per topic and partition", _partitions(page, report)),
        ("Keys, nodes and subscriptions", _keys_and_nodes(page, report)),
        ("Dead letters by kind", _dead_letters(page, report)),
        ("Throughput", _throughput(page, report)),
        ("End-to-end latency", _latency(page, report)),
    ]
    figures = "".join(
        f'<div class="figure"><b>{html.escape(value)}</b><span>{html.escape(label)}</span></div>'
        for label, value in report.figures
    )
    body = "".join(f"<h2>{html.escape(title)}</h2>{content}" for title, content in sections)
    notes = "".join(f"<li>{html.escape(note)}</li>" for note in report.notes)
    plots = "\n".join(
        f"Plotly.newPlot({div!r}, ...(f => [f.data, f.layout, CONFIG])({figure}));"
        for div, figure in page.charts
    )
    created = report.created.strftime("%Y-%m-%d %H:%M:%S UTC")
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="yangkey">
<title>{html.escape(report.title)}</title>
<style>{STYLE}</style>
<script>{get_plotlyjs()}</script>
</head>
<body>
<h1>{html.escape(report.title)}</h1>
<div class="meta">{html.escape(report.source)} · {created}</div>
<div class="figures">{figures}</div>
{body}
<h2>Where the figures come from</h2>
<ul class="notes">{notes}</ul>
<script>
const CONFIG = {{"displaylogo": false, "displayModeBar": false, "responsive": true}};
{plots}
</script>
</body>
</html>
"""
