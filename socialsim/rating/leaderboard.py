"""The ratings file and the leaderboard made from it.

Every ``socialsim rate`` appends one JSON line per role (Decrypto) or game (gossip) to a ratings
file (default ``results/ratings.jsonl``): the entrant, its spec, the game, the role, the pool
version, the model, the seed and episodes, the rating and each score as ``[value, low, high]``
(the 95% interval), how well the rating predicts held-out seeds (``fit``: its log-loss, a
coin's, the per-opponent win rates' and the rates themselves; :mod:`.held_out`) and the results
directory. A later line for the same entrant, game, role, pool, seed and episodes replaces an
earlier one (a rerun is not a second entry).

``socialsim leaderboard [FILE]`` writes ``leaderboard.html`` (one self-contained page: a table per
game, sortable by clicking a header, each value with its interval and the pool version, the
rating's held-out log-loss and, where one number does not fit the entrant, its per-opponent win
rates) and ``leaderboard.csv`` (one row per entry, ``*_low`` and ``*_high`` columns for the
intervals, the log-losses and the per-opponent rates).
"""

from __future__ import annotations

import csv
import html
import json
import math
from pathlib import Path
from typing import Any

from socialsim.config import ConfigError

DEFAULT_FILE = Path("results") / "ratings.jsonl"

#: score key -> column title, per kind of table
COLUMNS = {
    "decrypto": (
        ("win_rate", "Win rate"),
        ("miscommunication_rate", "Miscommunication rate"),
        ("interception_rate", "Interception rate"),
    ),
    "gossip": (
        ("cooperates_with_cooperators", "Cooperates with cooperators"),
        ("refuses_defectors", "Refuses defectors"),
        ("exploits", "Exploits"),
        ("truthful_gossip", "Truthful gossip"),
        ("return", "Return"),
    ),
}


def identity(entry: dict[str, Any]) -> tuple:
    return tuple(entry[k] for k in ("entrant", "game", "role", "pool", "seed", "episodes"))


def append(path: Path, entries: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        for entry in entries:
            handle.write(json.dumps(entry, sort_keys=True, allow_nan=False) + "\n")


def read(path: Path) -> list[dict[str, Any]]:
    """The entries of a ratings file, the latest of each identity, in first-seen order."""
    if not path.is_file():
        raise ConfigError(f"FILE: no ratings file {path}; `socialsim rate` writes one")
    latest: dict[tuple, dict[str, Any]] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            latest[identity(entry)] = entry
        except (json.JSONDecodeError, KeyError, TypeError) as error:
            raise ConfigError(f"FILE: {path} line {number} is not a rating ({error})") from None
    return list(latest.values())


def table_kind(entry: dict[str, Any]) -> str:
    return "decrypto" if entry["game"] == "decrypto" else "gossip"


# -- CSV ------------------------------------------------------------------------------------------


def write_csv(entries: list[dict[str, Any]], path: Path) -> None:
    keys = list(dict.fromkeys(k for e in entries for k in e["scores"]))
    fields = ["entrant", "game", "role", "pool", "seed", "episodes", "games"]
    fields += ["rating", "rating_low", "rating_high"]
    fields += [f"{k}{s}" for k in keys for s in ("", "_low", "_high")]
    fields += ["held_out_log_loss", "per_opponent_log_loss", "one_number_fits", "per_opponent"]
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        for e in entries:
            row = {f: e.get(f) for f in fields[:7]}
            row.update(zip(fields[7:10], _triple(e["rating"]), strict=True))
            for k in keys:
                row.update(
                    zip((k, f"{k}_low", f"{k}_high"), _triple(e["scores"].get(k)), strict=True)
                )
            fit = e.get("fit") or {}
            row.update({f: fit.get(f) for f in fields[-4:-1]})
            row["per_opponent"] = "; ".join(
                f"{name} {rate:.3f}" for name, (rate, _) in fit.get("per_opponent", {}).items()
            )
            writer.writerow(row)


def _triple(value) -> tuple:
    return tuple(value) if value else (None, None, None)


# -- HTML -----------------------------------------------------------------------------------------


def _number(value: float | None, rating: bool) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "&ndash;"
    return f"{value:.0f}" if rating else f"{value:.3f}"


def _cell(triple, rating: bool = False) -> str:
    value, low, high = _triple(triple)
    sort = "" if value is None else f' data-value="{value!r}"'
    interval = (
        ""
        if low is None
        else f' <span class="ci">[{_number(low, rating)}, {_number(high, rating)}]</span>'
    )
    return f"<td{sort}>{_number(value, rating)}{interval}</td>"


def _table(title: str, kind: str, entries: list[dict[str, Any]]) -> str:
    heads = ["Entrant", *(["Role"] if kind == "decrypto" else []), "Rating (Elo)"]
    heads += ["Held-out log-loss"] + [t for _, t in COLUMNS[kind]]
    heads += ["Games", "Pool", "Per-opponent win rates"]
    text = ("Entrant", "Role", "Pool", "Per-opponent win rates")
    header = "".join(
        f'<th scope="col" class="{"text" if h in text else "number"}" '
        f'data-type="{"text" if h in text else "number"}"><button>{html.escape(h)}</button></th>'
        for h in heads
    )
    rows = []
    ordered = sorted(entries, key=lambda e: -(e["rating"][0] if e["rating"] else -math.inf))
    for e in ordered:
        cells = [f'<td class="text">{html.escape(e["entrant"])}</td>']
        if kind == "decrypto":
            cells.append(f'<td class="text">{html.escape(e["role"])}</td>')
        cells.append(_cell(e["rating"], rating=True))
        cells.append(_cell([(e.get("fit") or {}).get("held_out_log_loss"), None, None]))
        cells += [_cell(e["scores"].get(k)) for k, _ in COLUMNS[kind]]
        cells.append(f'<td data-value="{e["games"]}">{e["games"]}</td>')
        cells.append(f'<td class="text">{html.escape(e["pool"])}</td>')
        cells.append(f'<td class="text rates">{_rates(e.get("fit"))}</td>')
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return (
        f'<h2>{html.escape(title)}</h2>\n<table class="board" data-game="{html.escape(title)}">'
        f"<thead><tr>{header}</tr></thead>\n<tbody>\n" + "\n".join(rows) + "\n</tbody></table>"
    )


def _rates(fit: dict[str, Any] | None) -> str:
    """The per-opponent win rates where they predict held-out seeds better than the rating."""
    if not fit or fit.get("one_number_fits", True):
        return ""
    ordered = sorted(fit["per_opponent"].items(), key=lambda kv: -kv[1][0])
    return "<br>".join(
        html.escape(f"{'' if n.startswith('with ') else 'vs '}{n}: {r:.2f} ({g} games)")
        for n, (r, g) in ordered
    )


_STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin-bottom: 2em; }
th, td { padding: 0.3em 0.7em; border-bottom: 1px solid #ddd; text-align: right; }
td { white-space: nowrap; }
td.rates { font-size: 0.85em; }
.text { text-align: left; }
th button { font: inherit; font-weight: bold; background: none; border: none; cursor: pointer; }
th[aria-sort="ascending"] button::after { content: " \\25B2"; }
th[aria-sort="descending"] button::after { content: " \\25BC"; }
.ci { color: #777; font-size: 0.85em; }
p.note { max-width: 60em; color: #444; }
"""

# Click a header: sort its table by that column (numbers by data-value), again to reverse.
_SCRIPT = """
document.querySelectorAll("table.board").forEach(function (table) {
  table.querySelectorAll("th").forEach(function (th, column) {
    th.querySelector("button").addEventListener("click", function () {
      var descending = th.getAttribute("aria-sort") !== "descending";
      table.querySelectorAll("th").forEach(function (o) { o.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", descending ? "descending" : "ascending");
      var numeric = th.dataset.type === "number";
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      function key(row) {
        var cell = row.cells[column];
        if (!numeric) { return cell.textContent; }
        var v = parseFloat(cell.dataset.value);
        return isNaN(v) ? -Infinity : v;
      }
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        var order = x < y ? -1 : x > y ? 1 : 0;
        return descending ? -order : order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
"""


def page(entries: list[dict[str, Any]]) -> str:
    games = list(dict.fromkeys(e["game"] for e in entries))
    pools = ", ".join(sorted({e["pool"] for e in entries})) or "(none)"
    models = sorted({e["model"] for e in entries})
    tables = "\n".join(
        _table(game, table_kind(entries_of[0]), entries_of)
        for game in games
        for entries_of in [[e for e in entries if e["game"] == game]]
    )
    notes = "".join(f'<p class="note">Rating model: {html.escape(m)}.</p>' for m in models)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>socialsim leaderboard</title>
<style>{_STYLE}</style></head>
<body>
<h1>socialsim leaderboard</h1>
<p class="note">Reference pool: {html.escape(pools)}. Brackets: 95% cluster bootstrap
intervals over the pool's seeds (the seed the cluster). Ratings are comparable within one pool
version and one game (and, in Decrypto, one role; a team's rating is its encoder's plus its
decoder's). An interval of one point: the entrant's games went the same way on every seed.
Held-out log-loss: each seed's games predicted by the rating fitted on the other seeds (a coin:
0.693; lower is better). Where the entrant's per-opponent win rates predict them better than its
one rating, the rates are listed beside it. Click a header to sort.</p>
{notes}
{tables or "<p>No ratings yet.</p>"}
<script>{_SCRIPT}</script>
</body></html>
"""


def write(path: Path, out: Path | None = None) -> tuple[Path, Path]:
    entries = read(path)
    out = out or path.parent
    out.mkdir(parents=True, exist_ok=True)
    html_path, csv_path = out / "leaderboard.html", out / "leaderboard.csv"
    html_path.write_text(page(entries), encoding="utf-8")
    write_csv(entries, csv_path)
    return html_path, csv_path
