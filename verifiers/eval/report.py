"""``verifiers report``: eval runs side by side in one self-contained HTML file.

pass@k per dataset and language, the status breakdown as charts (matplotlib, embedded as
PNG data), per-problem flips between the first run and each other one, and the slowest
programs. A problem counts as solved in a run when at least one of its samples passed.
"""

from __future__ import annotations

import base64
import html
import io
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from verifiers.eval.runner import CATEGORY_ORDER, GroupSummary, read_rows, summarize


@dataclass
class Run:
    """One eval output file."""

    name: str
    rows: list[dict[str, Any]]

    @property
    def models(self) -> list[str]:
        """The models of its rows."""
        return sorted({str(r.get("model", "?")) for r in self.rows})

    @property
    def templates(self) -> list[str]:
        """The chat templates (hashes) its rows were generated with."""
        return sorted({str(r.get("template", "?")) for r in self.rows})

    def solved(self) -> dict[tuple[str, str], bool]:
        """(dataset, task) -> whether any sample passed."""
        out: dict[tuple[str, str], bool] = defaultdict(bool)
        for r in self.rows:
            key = (r["dataset"], r["task_id"])
            out[key] = out[key] or r["result"]["status"] == "passed"
        return dict(out)


def load_runs(paths: Sequence[Path]) -> list[Run]:
    """Runs from eval output files, named after the files (made unique)."""
    runs, seen = [], set()
    for path in paths:
        name = path.name.removesuffix(".jsonl")
        while name in seen:
            name += "'"
        seen.add(name)
        runs.append(Run(name, read_rows(path)))
    return runs


def _png(fig: Any) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


def _charts(runs: list[Run], summaries: list[list[GroupSummary]], ks: Sequence[int]) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    charts = []
    groups = sorted({(g.dataset, g.language) for s in summaries for g in s})
    labels = [f"{d}\n{lang}" for d, lang in groups]
    for k in ks:
        fig, ax = plt.subplots(figsize=(max(5, 1.6 * len(groups) * len(runs)), 3.4))
        width = 0.8 / max(1, len(runs))
        for i, (run, summary) in enumerate(zip(runs, summaries, strict=True)):
            by = {(g.dataset, g.language): g.pass_at_k.get(k) for g in summary}
            values = [100 * (by.get(key) or 0.0) for key in groups]
            xs = [x + i * width for x in range(len(groups))]
            bars = ax.bar(xs, values, width, label=run.name)
            ax.bar_label(bars, fmt="%.1f", fontsize=8)
        ax.set_xticks([x + width * (len(runs) - 1) / 2 for x in range(len(groups))], labels)
        ax.set_ylabel(f"pass@{k} (%)")
        ax.set_ylim(0, 105)
        ax.set_title(f"pass@{k}")
        ax.legend(fontsize=8)
        charts.append(_png(fig))
        plt.close(fig)
    fig, ax = plt.subplots(figsize=(7, 0.6 + 0.5 * len(runs)))
    left = [0.0] * len(runs)
    for category in CATEGORY_ORDER:
        shares = []
        for summary in summaries:
            total = sum(g.samples for g in summary) or 1
            shares.append(100 * sum(g.breakdown.get(category, 0) for g in summary) / total)
        if any(shares):
            ax.barh([r.name for r in runs], shares, left=left, label=category)
            left = [a + b for a, b in zip(left, shares, strict=True)]
    ax.set_xlabel("share of samples (%)")
    ax.set_xlim(0, 100)
    ax.set_title("verdicts")
    ax.legend(fontsize=7, ncol=5, loc="upper center", bbox_to_anchor=(0.5, -0.35))
    charts.append(_png(fig))
    plt.close(fig)
    return charts


def _table(head: Sequence[str], body: Sequence[Sequence[Any]]) -> str:
    cells = "".join(f"<th>{html.escape(str(h))}</th>" for h in head)
    rows = "".join(
        "<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in body
    )
    return f"<table><thead><tr>{cells}</tr></thead><tbody>{rows}</tbody></table>"


def _flips(runs: list[Run]) -> str:
    if len(runs) < 2:
        return "<p>One run: no flips to show.</p>"
    base = runs[0].solved()
    parts = []
    for other in runs[1:]:
        now = other.solved()
        common = sorted(set(base) & set(now))
        gained = [f"{d} {t}" for d, t in common if now[(d, t)] and not base[(d, t)]]
        lost = [f"{d} {t}" for d, t in common if base[(d, t)] and not now[(d, t)]]
        parts.append(
            f"<h3>{html.escape(runs[0].name)} → {html.escape(other.name)}</h3>"
            f"<p>{len(common)} problems in both; solved by {html.escape(other.name)} only: "
            f"{len(gained)}; solved by {html.escape(runs[0].name)} only: {len(lost)}.</p>"
            + _table(
                [
                    f"solved by {other.name}, not {runs[0].name}",
                    f"solved by {runs[0].name}, not {other.name}",
                ],
                [
                    (gained[i] if i < len(gained) else "", lost[i] if i < len(lost) else "")
                    for i in range(max(len(gained), len(lost)))
                ],
            )
        )
    return "".join(parts)


def _slowest(runs: list[Run], count: int = 10) -> str:
    rows = [
        (
            r["result"].get("duration_s", 0.0),
            run.name,
            r["dataset"],
            r["task_id"],
            r["sample"],
            r["result"]["status"],
        )
        for run in runs
        for r in run.rows
    ]
    rows.sort(key=lambda x: -x[0])
    return _table(
        ["seconds", "run", "dataset", "task", "sample", "status"],
        [(f"{s:.2f}", *rest) for s, *rest in rows[:count]],
    )


_STYLE = """
body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;
text-align:right}th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}
.warn{background:#fff4d6;border:1px solid #e0b84a;padding:8px}img{max-width:100%}
"""


def render(runs: list[Run], ks: Sequence[int] = (1,)) -> str:
    """The report's HTML (one self-contained page)."""
    summaries = [summarize(run.rows, ks) for run in runs]
    shown_ks = sorted({k for s in summaries for g in s for k in g.pass_at_k})
    overview = _table(
        ["run", "models", "samples", "problems", "chat template"],
        [
            (
                r.name,
                ", ".join(r.models),
                len(r.rows),
                len({x["task_id"] for x in r.rows}),
                ", ".join(r.templates),
            )
            for r in runs
        ],
    )
    warn = ""
    if len({t for r in runs for t in r.templates}) > 1:
        warn = (
            '<p class="warn">The runs used different chat templates: differences may come from '
            "the prompt format, not the model. Pass the same <code>--chat-template</code>.</p>"
        )
    head = [
        "dataset",
        "language",
        "problems",
        *[f"{r.name} pass@{k}" for k in shown_ks for r in runs],
    ]
    groups = sorted({(g.dataset, g.language) for s in summaries for g in s})
    body = []
    for key in groups:
        found = [next((g for g in s if (g.dataset, g.language) == key), None) for s in summaries]
        problems = max((g.problems for g in found if g), default=0)
        cells = []
        for k in shown_ks:
            for g in found:
                value = g.pass_at_k.get(k) if g else None
                cells.append("-" if value is None else f"{100 * value:.1f}%")
        body.append((*key, problems, *cells))
    breakdown = _table(
        ["run", *CATEGORY_ORDER],
        [
            (run.name, *[sum(g.breakdown.get(c, 0) for g in s) for c in CATEGORY_ORDER])
            for run, s in zip(runs, summaries, strict=True)
        ],
    )
    images = "".join(
        f'<img alt="chart {i}" src="{src}">'
        for i, src in enumerate(_charts(runs, summaries, shown_ks or [1]))
    )
    # Set once the page has loaded: how many charts decoded (the report test reads it).
    script = (
        "<script>window.addEventListener('load',()=>{document.body.dataset.charts="
        "[...document.images].filter(i=>i.complete&&i.naturalWidth>0).length;});</script>"
    )
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>verifiers report</title>"
        f"<style>{_STYLE}</style></head><body><h1>Evaluation report</h1>{overview}{warn}"
        f"<h2>pass@k</h2>{_table(head, body)}<h2>Verdicts</h2>{breakdown}"
        f"<h2>Charts</h2>{images}<h2>Per-problem flips</h2>{_flips(runs)}"
        f"<h2>Slowest programs</h2>{_slowest(runs)}{script}</body></html>"
    )


def write_report(paths: Sequence[Path], out: Path, ks: Sequence[int] = (1,)) -> list[Run]:
    """Read eval outputs and write the HTML report; returns the runs."""
    runs = load_runs(paths)
    out.write_text(render(runs, ks), encoding="utf-8")
    return runs


__all__ = ["Run", "load_runs", "render", "write_report"]
