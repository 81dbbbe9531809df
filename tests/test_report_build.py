"""``socialsim report`` builds from every kind of run: each bundled scripted experiment, a run
with failed episodes, an LLM run whose answers are unparseable (and shows them), an empty run;
every JSON it writes parses strictly, every figure has a title and report.html embeds them."""

from __future__ import annotations

import json
import re
import textwrap

import pytest
from matplotlib.figure import Figure

from socialsim import config as config_module
from socialsim import records
from socialsim.analysis import report as report_module
from socialsim.cli import main

SCRIPTED = [
    name for name in config_module.bundled_experiments() if not name.startswith(("llm_", "smollm2"))
]


def _refuse(constant: str):
    raise ValueError(f"not strict JSON: {constant}")


def strictly_parsed(directory) -> list[str]:
    names = []
    for path in sorted(directory.glob("*.json")):
        json.loads(path.read_text(), parse_constant=_refuse)
        names.append(path.name)
    return names


@pytest.fixture
def titles(monkeypatch) -> list[tuple[str, bool]]:
    """(file name, has a title) of every figure saved."""
    seen: list[tuple[str, bool]] = []
    save = Figure.savefig

    def savefig(self, path, *args, **kwargs):
        titled = bool(self._suptitle and self._suptitle.get_text()) or any(
            a.get_title() for a in self.axes
        )
        seen.append((str(path).rsplit("/", 1)[-1], titled))
        return save(self, path, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", savefig)
    return seen


@pytest.mark.parametrize("name", SCRIPTED)
def test_the_report_builds_from_every_bundled_scripted_experiment(name, tmp_path, titles, capsys):
    out = tmp_path / name
    episodes = "4" if name.startswith("decrypto") else "2"
    assert main(["run", name, "--out", str(out), "--quiet", "--set", f"episodes={episodes}"]) == 0
    capsys.readouterr()
    assert main(["report", str(out)]) == 0
    text = capsys.readouterr().out
    assert "episodes: " in text and " 0 failed" in text
    assert "nan" not in text.lower().replace("n/a", "")  # undefined values print as n/a
    assert not re.search(r"\de-1\d", text)  # no float noise like 3.511e-17
    strictly_parsed(out)
    assert all(titled for _, titled in titles), titles
    page = (out / "report.html").read_text()
    figures = sorted(p.name for p in out.glob("*.png"))
    assert page.count("data:image/png;base64,") == len(figures)
    if name != "matching_pennies":
        assert figures, "a game family's report draws figures"


def _record(status: str, episode: int, error: str | None = None) -> records.EpisodeRecord:
    return records.EpisodeRecord(
        experiment="x",
        cell={},
        episode=episode,
        seed=episode,
        env_id="matching_pennies_v0",
        env_kwargs={},
        form="parallel",
        seats={"matcher": {"kind": "pennies_random"}, "mismatcher": {"kind": "pennies_random"}},
        status=status,
        error=error,
        returns={"matcher": 1.0, "mismatcher": -1.0} if status == "done" else {},
    )


def test_the_report_of_a_run_with_failed_episodes_counts_them_by_reason(tmp_path):
    records.write_manifest(tmp_path, {"config": {"name": "x"}, "episodes_total": 4})
    with records.EventLog(tmp_path) as log:
        log.append(_record("done", 0))
        log.append(_record("failed", 1, "seat matcher (pennies_random): RuntimeError: boom"))
        log.append(_record("failed", 2, "seat matcher (pennies_random): RuntimeError: boom"))
        log.append(_record("failed", 3, "TimeoutError: provider"))
    text = report_module.report(tmp_path)
    assert "episodes: 1 done, 3 failed (of 4)" in text
    block = text.split("failed episodes by reason:")[1]
    assert "2 seat matcher (pennies_random): RuntimeError: boom" in block
    assert "1 TimeoutError: provider" in block
    assert "RuntimeError: boom" in (tmp_path / "report.html").read_text()


def test_the_report_of_an_empty_run_says_nothing_is_logged_yet(tmp_path):
    records.write_manifest(tmp_path, {"config": {"name": "x"}, "episodes_total": 2})
    text = report_module.report(tmp_path)
    assert "episodes: 0 done, 0 failed (of 2)" in text
    assert "no episode is logged yet" in text and "run the experiment first" in text
    assert (tmp_path / "report.html").exists()


def test_an_llm_run_with_unparseable_answers_shows_them_in_the_health_table(
    llm_server, fresh_models, tmp_path, capsys
):
    llm_server.policy = lambda messages, request: "I would rather not say."
    path = tmp_path / "llm.toml"
    path.write_text(
        textwrap.dedent(
            f"""
            name = "llm_unparseable"
            episodes = 1
            seed = 0
            [env]
            id = "donation_v0"
            [env.kwargs]
            n_agents = 5
            entrant = "isolated"
            [seats."*"]
            kind = "llm_gossip"
            [seats."*".model]
            model = "openai/test"
            api_base = "{llm_server.url}"
            transport = "openai_http"
            cache = false
            [seats.agent_4]
            kind = "entrant"
            """
        )
    )
    out = tmp_path / "llm"
    code = main(["run", str(path), "--out", str(out), "--quiet"])
    assert code == 0
    (record,) = records.read_records(out)
    invalid = sum(c.get("invalid_answers", 0) for c in record.counters.values())
    fallbacks = sum(c.get("fallbacks", 0) for c in record.counters.values())
    assert invalid > 0 and fallbacks > 0
    capsys.readouterr()
    assert main(["report", str(out)]) == 0
    text = capsys.readouterr().out
    assert f"invalid answers: {invalid}, fallbacks: {fallbacks}" in text
    health = text.split("LLM health per seat:")[1]
    row = next(line for line in health.splitlines() if line.strip().startswith("agent_0 "))
    fields = row.split()
    columns = report_module.health.COLUMNS
    john = record.counters["agent_0"]
    assert fields[columns.index("invalid_answers")] == str(john["invalid_answers"])
    assert fields[columns.index("fallbacks")] == str(john["fallbacks"])
    assert int(fields[columns.index("calls")]) == john["llm_calls"]
    assert int(fields[columns.index("reprompts")]) == john["llm_calls"] - john["fallbacks"]
    html = (out / "report.html").read_text()
    assert "LLM health per seat" in html and "invalid_answers" in html
