"""The report and the transcripts know a game by its family, not by a versioned env id: a Decrypto
env under another id (a ``decrypto_v1``, here a user's shim by its import path) gets the same
Decrypto tables and the same hint history as ``decrypto_v0``."""

from __future__ import annotations

import dataclasses
import json
import shutil

from socialsim import records
from socialsim.analysis import report as report_module
from socialsim.analysis import transcript
from socialsim.cli import main

SHIM = "from socialsim.envs.decrypto_v0 import env, parallel_env, raw_env  # noqa: F401\n"
V1 = "later_games.decrypto_v1"


def _relabelled(source, target, env_id: str) -> None:
    """A copy of the run in ``source`` whose records name ``env_id``."""
    target.mkdir()
    shutil.copy(source / records.MANIFEST, target / records.MANIFEST)
    with records.EventLog(target) as log:
        for record in records.read_records(source):
            log.append(dataclasses.replace(record, env_id=env_id))


def test_a_decrypto_env_of_another_version_is_reported_as_decrypto(tmp_path, monkeypatch, capsys):
    package = tmp_path / "games" / "later_games"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "decrypto_v1.py").write_text(SHIM)
    monkeypatch.syspath_prepend(str(tmp_path / "games"))
    v0 = tmp_path / "v0"
    args = ["run", "decrypto_quickstart", "--out", str(v0), "--quiet", "--set", "episodes=2"]
    assert main(args) == 0
    capsys.readouterr()
    v1 = tmp_path / "v1"
    _relabelled(v0, v1, V1)

    built = {run: report_module.build(run) for run in (v0, v1)}

    sections = {run: {s.title: s for s in r.sections} for run, r in built.items()}
    assert "Decrypto outcomes per cell" in sections[v1]
    for title in ("Decrypto outcomes per cell", "cell metrics: mean, SEM and 95% bootstrap CI"):
        assert sections[v1][title].table.equals(sections[v0][title].table)
    assert (v1 / "decrypto_outcomes.csv").read_text() == (v0 / "decrypto_outcomes.csv").read_text()
    hints = {
        run: [transcript.episode_data(r)["hints"] for r in records.read_records(run)]
        for run in (v0, v1)
    }
    assert all(hints[v0]) and hints[v1] == hints[v0]
    assert json.loads(json.dumps(hints[v1])) == hints[v1]
