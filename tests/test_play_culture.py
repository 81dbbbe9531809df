"""A person plays a seat of the culture donor game in the terminal: the view tells the recipient
and its trace, a fraction off the grid (or a punishment the rules forbid) is asked again with
the reason, and the game is logged like any run."""

from __future__ import annotations

import io

from socialsim import cli, records


def test_a_person_gives_fractions_in_the_culture_game(tmp_path, monkeypatch, capsys):
    out = tmp_path / "culture"
    argv = ["play", "culture", "--as", "agent_0", "--seed", "1", "--out", str(out)]
    argv += ["--set", "env.kwargs.n_agents=4", "--set", "env.kwargs.rounds=4"]
    monkeypatch.setattr("sys.stdin", io.StringIO("0.25\npunish 0.2\ngive 0.3\n" + "1\n" * 10))
    assert cli.main(argv) == 0
    said = capsys.readouterr().out
    assert "The culture donor game: 4 players start with 10 units each; 4 rounds." in said
    assert "'0.25': type a fraction 0, 0.1, ... 1" in said
    assert "'punish 0.2': type a fraction 0, 0.1, ... 1" in said  # punishment is off
    (record,) = records.read_records(out)
    given = [
        m["payload"]["fraction"]
        for m in record.messages
        if m["kind"] == "interaction" and m["payload"]["donor"] == "agent_0"
    ]
    assert given == [0.3, 1.0]  # a donor every other round
    assert record.counters["agent_0"].get("invalid_inputs", 0) == 0  # refused as typed, by field
    assert "Average final resources" in said
