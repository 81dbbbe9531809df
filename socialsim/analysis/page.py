"""``report.html``: the report as one self-contained HTML file (no network, no other file): the
manifest (experiment, description, seeds, grid, versions, models, commit), every section of
:class:`~socialsim.analysis.sections.Report` with its units note, and the figures embedded as
base64 PNG. Undefined values read ``n/a`` (:mod:`~socialsim.analysis.stats`).
"""

from __future__ import annotations

import base64
import html
import json
from typing import TYPE_CHECKING, Any

from socialsim.analysis.stats import number

if TYPE_CHECKING:
    from socialsim.analysis.sections import Report

STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; padding: 0 1.5em; max-width: 1400px; color: #222; }
h1 { font-size: 1.6em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; font-size: 0.82em; margin: 0.5em 0; }
th, td { border: 1px solid #ddd; padding: 2px 6px; text-align: right; }
th { background: #f3f3f3; } td.text { text-align: left; }
p.note { color: #555; font-size: 0.85em; margin: 0.2em 0; }
figure { margin: 1.5em 0; } figure img { max-width: 100%; border: 1px solid #eee; }
pre { background: #f7f7f7; padding: 0.6em; font-size: 0.8em; overflow-x: auto; }
"""


def _table(frame) -> str:
    if frame.empty:
        return "<p class='note'>(none)</p>"
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    body = []
    for row in frame.itertuples(index=False):
        cells = []
        for value in row:
            text = number(value)
            cls = " class='text'" if isinstance(value, str) else ""
            cells.append(f"<td{cls}>{html.escape(text)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _manifest(manifest: dict[str, Any]) -> str:
    config = manifest.get("config", {})
    facts = {
        "experiment": config.get("name"),
        "description": config.get("description"),
        "episodes per cell": config.get("episodes"),
        "base seed": config.get("seed"),
        "env": (config.get("env") or {}).get("id"),
        "grid": json.dumps(config.get("grid") or {}, sort_keys=True),
        "models": json.dumps(manifest.get("llm") or [], sort_keys=True),
        "git commit": manifest.get("git_commit"),
        "started": manifest.get("started"),
    }
    rows = "".join(
        f"<tr><th>{html.escape(k)}</th><td class='text'>{html.escape(str(v))}</td></tr>"
        for k, v in facts.items()
        if v not in (None, "", "[]", "{}")
    )
    full = html.escape(json.dumps(manifest, indent=2, sort_keys=True, default=str))
    return (
        f"<table>{rows}</table><details><summary>full manifest (config, versions)</summary>"
        f"<pre>{full}</pre></details>"
    )


def render(report: Report) -> str:
    """The HTML page of ``report``."""
    name = report.manifest.get("config", {}).get("name", "experiment")
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>socialsim report: {html.escape(str(name))}</title><style>{STYLE}</style></head><body>",
        f"<h1>socialsim report: {html.escape(str(name))}</h1>",
        "<h2>Manifest</h2>",
        _manifest(report.manifest),
    ]
    for section in report.sections:
        if not section.in_page:
            continue
        parts.append(f"<h2>{html.escape(section.title or 'Summary')}</h2>")
        if section.note:
            parts.append(f"<p class='note'>{html.escape(section.note)}</p>")
        if section.table is not None:
            parts.append(_table(section.table))
        if section.text:
            parts.append(f"<pre>{html.escape(section.text)}</pre>")
    if report.figures:
        parts.append("<h2>Figures</h2>")
    for path in report.figures:
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        parts.append(
            f"<figure><img alt='{html.escape(path.stem)}' src='data:image/png;base64,{data}'>"
            f"<figcaption>{html.escape(path.name)}</figcaption></figure>"
        )
    parts.append("</body></html>")
    return "\n".join(parts)
