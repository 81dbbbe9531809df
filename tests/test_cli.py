import textwrap

import pytest

from socialsim.cli import main

PENNIES = """
name = "pennies"
episodes = 3
seed = 0
[env]
id = "matching_pennies_v0"
[env.kwargs]
rounds = 4
[seats.matcher]
kind = "pennies_random"
p_heads = 1.0
[seats.mismatcher]
kind = "pennies_random"
p_heads = 1.0
"""


def test_list_shows_envs_agent_kinds_probes_and_bundled_files(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    for name in (
        "donation_v0",
        "decrypto_v0",
        "matching_pennies_v0",
        "image_scoring",
        "glove_encoder",
        "piaget",
        "align_quickstart",
        "decrypto_quickstart",
    ):
        assert name in out


def test_report_prints_counts_and_mean_returns_and_writes_tables(tmp_path, capsys):
    path = tmp_path / "exp.toml"
    path.write_text(textwrap.dedent(PENNIES))
    out = tmp_path / "out"
    assert main(["run", str(path), "--out", str(out), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["report", str(out)]) == 0
    text = capsys.readouterr().out
    assert "episodes: 3 done, 0 failed (of 3)" in text
    # both always show heads: the matcher wins every round, 4 per episode
    row = next(line for line in text.splitlines() if line.strip().startswith("matcher"))
    assert row.split()[-3:] == ["3", "4", "0"]
    assert (out / "returns.csv").exists()


def test_report_on_a_directory_without_an_experiment_exits_2(tmp_path, capsys):
    assert main(["report", str(tmp_path)]) == 2
    assert "holds no experiment" in capsys.readouterr().err


def test_list_shows_each_bundled_experiment_with_its_description(capsys):
    assert main(["list"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if "matching_pennies " in x)
    assert line.split(None, 1)[1] == (
        "Repeated matching pennies: random faces against a copycat (smoke test of the engine)."
    )


def test_an_unknown_name_gets_the_nearest_suggestion(tmp_path, capsys):
    out = str(tmp_path / "out")
    assert main(["run", "matching_penies", "--out", out]) == 2
    assert "(did you mean 'matching_pennies'?)" in capsys.readouterr().err
    assert main(["run", "matching_pennies", "--set", "seats.matcher.kind=pennies_rnd"]) == 2
    assert "unknown agent kind 'pennies_rnd' (did you mean 'pennies_random'" in (
        capsys.readouterr().err
    )


@pytest.mark.parametrize("command", ["run", "fork", "replay", "rate"])
def test_every_command_that_can_call_a_model_has_offline(command, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    assert "--offline" in capsys.readouterr().out
