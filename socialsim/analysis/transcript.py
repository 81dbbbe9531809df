"""``transcripts.html``: a self-contained page that replays the bus log of a run's episodes turn by
turn, with a picker for the episode and a selector for whose view to show: everyone's (the full
log) or one seat's, which keeps only the messages whose audience included it (public, its
team's, its own), as the bus delivered them. A seat's view also lists its LLM replies (the
justifications, invalid answers and fallbacks its ``events`` hold). Decrypto episodes get the
hint history by keyword, as the reveals made it public.

An ``[evolution]`` run's page opens with **Strategies by generation**: for each grid cell and
replicate (the first :data:`EPISODES_PER_CELL` of each cell), each generation's seats with their
kind, their parent in the generation before, the generation-0 seat their line descends from,
and the strategy text each posted (the culture donors': read by the family's protocol,
:func:`socialsim.envs.culture.protocol.strategy_texts`). The texts are model output: the block
is escaped HTML, never markup.

The page holds at most :data:`EPISODES_PER_CELL` episodes of each grid cell and
:data:`MAX_EPISODES` in all (the first ones), so that a large grid stays one small file.
"""

from __future__ import annotations

import html
import json
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from socialsim.analysis.decrypto_report import is_decrypto
from socialsim.analysis.stats import undefined_as_null
from socialsim.analysis.tables import cell_label
from socialsim.envs.culture.protocol import strategy_texts
from socialsim.records import EpisodeRecord

EPISODES_PER_CELL = 3
MAX_EPISODES = 60
EVERYONE = "*"


def _teams(record: EpisodeRecord) -> dict[str, list[str]]:
    for message in record.messages:
        if message.get("kind") == "rules":
            teams = (message.get("payload") or {}).get("teams") or {}
            return {str(k): list(v) for k, v in teams.items()}
    return {}


def audience(message: dict[str, Any], teams: dict[str, list[str]], seats: list[str]) -> list[str]:
    """The seats that could see ``message``."""
    to = message.get("to")
    if to == EVERYONE:
        return list(seats)
    if isinstance(to, str) and to.startswith("team:"):
        return list(teams.get(to[len("team:") :], []))
    if isinstance(to, list | tuple):
        return [str(a) for a in to]
    return []


def hint_history(record: EpisodeRecord) -> dict[str, list[list[Any]]]:
    """Decrypto: keyword position (1-4) -> [turn, hint] pairs, from the public reveals."""
    history: dict[str, list[list[Any]]] = defaultdict(list)
    for message in record.messages:
        if message.get("kind") != "reveal":
            continue
        payload = message.get("payload") or {}
        for position, hint in zip(payload.get("code", []), payload.get("hints", []), strict=False):
            history[str(position)].append([payload.get("turn"), hint])
    return dict(sorted(history.items()))


def _replies(record: EpisodeRecord) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for seat, events in record.events.items():
        rows = []
        for event in events:
            if event.get("type") == "llm_call":
                rows.append(
                    {
                        "decision": event.get("decision"),
                        "attempt": event.get("answer_attempt"),
                        "reply": event.get("reply"),
                        "invalid": event.get("invalid"),
                    }
                )
            elif event.get("type") == "fallback":
                rows.append({"decision": event.get("decision"), "fallback": event.get("value")})
        if rows:
            out[seat] = rows
    return out


def episode_data(record: EpisodeRecord) -> dict[str, Any]:
    """What the page shows of one episode, as plain JSON."""
    seats = list(record.seats)
    teams = _teams(record)
    return {
        "label": f"{cell_label(record.cell)} | episode {record.episode} (seed {record.seed})",
        "status": record.status,
        "error": record.error,
        "seats": seats,
        "messages": [
            {
                "turn": m.get("turn"),
                "sender": m.get("sender"),
                "to": m.get("to"),
                "kind": m.get("kind"),
                "payload": m.get("payload"),
                "audience": audience(m, teams, seats),
            }
            for m in record.messages
        ],
        "replies": _replies(record),
        "hints": hint_history(record) if is_decrypto(record.env_id) else {},
        "returns": record.returns,
    }


def select(records: Iterable[EpisodeRecord]) -> list[EpisodeRecord]:
    """The first :data:`EPISODES_PER_CELL` episodes of each cell, :data:`MAX_EPISODES` in all."""
    taken: dict[str, int] = defaultdict(int)
    chosen = []
    for record in records:
        label = cell_label(record.cell)
        if taken[label] < EPISODES_PER_CELL and len(chosen) < MAX_EPISODES:
            taken[label] += 1
            chosen.append(record)
    return chosen


GENERATION, PARENT = "generation", "parent"  # an evolution record's cell key and seat key


def lineages(records: Iterable[EpisodeRecord]) -> dict[tuple[str, int], list[EpisodeRecord]]:
    """An evolution run's done records by (cell label without the generation, replicate), each
    list in generation order: the first :data:`EPISODES_PER_CELL` replicates of each cell."""
    runs: dict[tuple[str, int], list[EpisodeRecord]] = defaultdict(list)
    for record in records:
        if record.status == "done" and GENERATION in record.cell:
            cell = {k: v for k, v in record.cell.items() if k != GENERATION}
            runs[cell_label(cell), record.episode].append(record)
    kept: dict[str, int] = defaultdict(int)
    chosen = {}
    for (label, replicate), run in sorted(runs.items()):
        if kept[label] < EPISODES_PER_CELL:
            kept[label] += 1
            chosen[label, replicate] = sorted(run, key=lambda r: r.cell[GENERATION])
    return chosen


def strategy_rows(run: list[EpisodeRecord]) -> list[tuple[int, list[dict[str, str]]]]:
    """Per generation of one replicate: each seat's ``seat``, ``kind``, ``parent`` (how it came
    to its place), ``line`` (the generation-0 seat it descends from) and ``strategy`` (the text
    it posted, or ``""``)."""
    line: dict[str, str] = {}
    out = []
    for record in run:
        texts = strategy_texts(record.messages)
        g = record.cell[GENERATION]
        rows, founders = [], {}
        order = [a for a in record.summary.get("agents", ()) if a in record.seats]
        for seat in order or list(record.seats):  # the env's order: agent_2 before agent_10
            spec = record.seats[seat]
            parent = spec.get(PARENT)
            if parent is None:
                how, founders[seat] = "generation 0", seat
            else:
                founders[seat] = line.get(parent, parent)
                how = "kept its place" if parent == seat else f"child of {parent}"
            rows.append(
                {
                    "seat": seat,
                    "kind": str(spec.get("kind")),
                    "parent": how,
                    "line": founders[seat],
                    "strategy": texts.get(seat, ""),
                }
            )
        line = founders
        out.append((g, rows))
    return out


def strategies_block(records: Iterable[EpisodeRecord]) -> str:
    """The "Strategies by generation" block (see the module docstring), escaped HTML; ``""``
    without evolution records."""
    runs = lineages(records)
    if not runs:
        return ""
    e = html.escape
    parts = [
        '<div id="strategies"><h2>Strategies by generation</h2>',
        "<p>Each generation's seats: those that kept their place (survivors, and the rl and "
        "human seats, which selection passes over) and the newborns, each the child of the seat "
        "whose spec it inherited; <em>line of</em>: the generation-0 seat its line descends "
        "from; <em>strategy</em>: the text the seat posted (an LLM newborn writes its own after "
        "reading the survivors').</p>",
    ]
    head = "<tr><th>seat</th><th>kind</th><th>parent</th><th>line of</th><th>strategy</th></tr>"
    for k, ((label, replicate), run) in enumerate(runs.items()):
        opened = " open" if k == 0 else ""
        parts.append(f"<details{opened}><summary>{e(label)} | replicate {replicate}</summary>")
        for g, rows in strategy_rows(run):
            parts.append(f"<h3>Generation {e(str(g))}</h3><table><thead>{head}</thead><tbody>")
            for row in rows:
                cells = [e(row[key]) for key in ("seat", "kind", "parent", "line")]
                parts.append(
                    "<tr>"
                    + "".join(f"<td>{c}</td>" for c in cells)
                    + f'<td class="payload">{e(row["strategy"])}</td></tr>'
                )
            parts.append("</tbody></table>")
        parts.append("</details>")
    parts.append("</div>")
    return "\n".join(parts)


SCRIPT = r"""
const data = JSON.parse(document.getElementById('episodes').textContent);
const episodeSel = document.getElementById('episode');
const viewSel = document.getElementById('view');
data.forEach((ep, i) => episodeSel.add(new Option(ep.label, i)));
function text(value) {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}
function cell(row, value, cls) {
  const td = row.insertCell(); td.textContent = text(value); if (cls) td.className = cls; return td;
}
function showViews() {
  const ep = data[episodeSel.value];
  viewSel.innerHTML = '';
  viewSel.add(new Option('everyone (the full log)', '*'));
  ep.seats.forEach(s => viewSel.add(new Option('what ' + s + ' saw', s)));
  render();
}
function render() {
  const ep = data[episodeSel.value];
  const view = viewSel.value;
  const shown = ep.messages.filter(m => view === '*' || m.audience.includes(view));
  document.getElementById('summary').textContent =
    shown.length + ' of ' + ep.messages.length + ' messages; status ' + ep.status +
    (ep.error ? ' (' + ep.error + ')' : '') + '; returns ' + JSON.stringify(ep.returns);
  const body = document.getElementById('log');
  body.innerHTML = '';
  shown.forEach(m => {
    const row = body.insertRow();
    row.className = 'message';
    cell(row, m.turn); cell(row, m.sender); cell(row, m.to); cell(row, m.kind);
    cell(row, m.payload, 'payload');
  });
  const replies = document.getElementById('replies');
  replies.innerHTML = '';
  const seats = view === '*' ? Object.keys(ep.replies) : [view];
  seats.forEach(s => (ep.replies[s] || []).forEach(r => {
    const row = replies.insertRow();
    cell(row, s); cell(row, r.decision); cell(row, r.attempt);
    cell(row, r.fallback !== undefined ? 'fallback: ' + text(r.fallback) : r.reply, 'payload');
    cell(row, r.invalid);
  }));
  document.getElementById('replies-block').hidden = replies.rows.length === 0;
  const hints = document.getElementById('hints');
  hints.innerHTML = '';
  Object.entries(ep.hints).forEach(([position, list]) => {
    const row = hints.insertRow();
    cell(row, 'keyword ' + position);
    cell(row, list.map(([turn, hint]) => 'turn ' + turn + ': ' + hint).join(' | '), 'payload');
  });
  document.getElementById('hints-block').hidden = hints.rows.length === 0;
}
episodeSel.addEventListener('change', showViews);
viewSel.addEventListener('change', render);
if (data.length) showViews();
"""

STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
table { border-collapse: collapse; font-size: 0.82em; }
th, td { border: 1px solid #ddd; padding: 2px 6px; vertical-align: top; text-align: left; }
th { background: #f3f3f3; } td.payload { font-family: monospace; white-space: pre-wrap; }
select { margin: 0 1em 1em 0.3em; max-width: 60em; }
"""


def render(records: Iterable[EpisodeRecord], title: str) -> str:
    """The transcript page of ``records`` (see :func:`select`)."""
    records = list(records)
    episodes = [episode_data(r) for r in select(records)]
    strategies = strategies_block(records)
    blob = json.dumps(undefined_as_null(episodes), allow_nan=False, default=str)
    blob = blob.replace("</", "<\\/")  # no </script> inside the script
    return f"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<title>transcripts: {html.escape(title)}</title><style>{STYLE}</style></head><body>
<h1>Transcripts: {html.escape(title)}</h1>
{strategies}
<label>episode <select id="episode"></select></label>
<label>view <select id="view"></select></label>
<p id="summary"></p>
<div id="hints-block" hidden><h2>Hint history by keyword (public after each reveal)</h2>
<table><tbody id="hints"></tbody></table></div>
<h2>Bus log</h2>
<table><thead><tr><th>turn</th><th>sender</th><th>to</th><th>kind</th><th>payload</th></tr></thead>
<tbody id="log"></tbody></table>
<div id="replies-block" hidden><h2>LLM replies (justifications, invalid answers, fallbacks)</h2>
<table><thead><tr><th>seat</th><th>decision</th><th>attempt</th><th>reply</th><th>invalid</th></tr>
</thead><tbody id="replies"></tbody></table></div>
<script type="application/json" id="episodes">{blob}</script>
<script>{SCRIPT}</script>
</body></html>
"""
