import textwrap

import pytest

from socialsim import config
from socialsim.cli import main

GOOD = """
name = "pennies"
episodes = 3
seed = 5
[env]
id = "matching_pennies_v0"
[env.kwargs]
rounds = 2
[seats."*"]
kind = "pennies_random"
[seats.mismatcher]
kind = "pennies_copycat"
[grid]
"env.kwargs.rounds" = [2, 4]
"seats.matcher.p_heads" = [0.0, 1.0]
"""


def write(tmp_path, text: str):
    path = tmp_path / "exp.toml"
    path.write_text(textwrap.dedent(text))
    return path


def test_grid_crosses_every_value_and_seeds_follow_the_episode_index(tmp_path):
    experiment = config.load(str(write(tmp_path, GOOD)))
    cells = [cell for cell, _ in experiment.cells]
    assert cells == [
        {"env.kwargs.rounds": 2, "seats.matcher.p_heads": 0.0},
        {"env.kwargs.rounds": 2, "seats.matcher.p_heads": 1.0},
        {"env.kwargs.rounds": 4, "seats.matcher.p_heads": 0.0},
        {"env.kwargs.rounds": 4, "seats.matcher.p_heads": 1.0},
    ]
    specs = experiment.specs()
    assert len(specs) == 12
    assert [s.seed for s in specs[:3]] == [5, 6, 7]
    assert specs[3].seats == {
        "matcher": {"kind": "pennies_random", "p_heads": 1.0},
        "mismatcher": {"kind": "pennies_copycat"},
    }
    assert specs[3].env_kwargs == {"rounds": 2}


def test_set_overrides_any_key_and_grid_entries(tmp_path):
    experiment = config.load(
        str(write(tmp_path, GOOD)),
        ["episodes=1", "env.kwargs.rounds=9", "grid.env.kwargs.rounds=[7]"],
    )
    assert experiment.config["episodes"] == 1
    assert [cell for cell, _ in experiment.cells][0] == {
        "env.kwargs.rounds": 7,
        "seats.matcher.p_heads": 0.0,
    }


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (
            "episodse=3",
            "episodse: unknown key 'episodse' (did you mean 'episodes' or 'episode_timeout'?); allowed keys: name, description, episodes, seed",
        ),
        ("episodes='ten'", "episodes: expected an integer, got 'ten' (str)"),
        ("episodes=true", "episodes: expected an integer, got True (bool)"),
        (
            "env.kwarg.rounds=3",
            "env.kwarg: unknown key 'kwarg' (did you mean 'kwargs'?); allowed keys: id, form, kwargs",
        ),
        (
            "env.kwargs.roundz=3",
            "env.kwargs: unknown key 'roundz' (did you mean 'rounds'?); allowed keys: rounds",
        ),
        ("grid.env.kwargs.rounds=[0]", "env.kwargs.rounds: must be an integer >= 1, got 0"),
        ("env.id='chess_v9'", "env.id: unknown env 'chess_v9'; allowed: matching_pennies_v0"),
        ("env.form='serial'", "env.form: 'serial' is not allowed; allowed: parallel, aec"),
        (
            "seats.mismatcher.kind='genius'",
            "seats.mismatcher.kind: unknown agent kind 'genius'; allowed: ",
        ),
        (
            "seats.mismatcher.speed=3",
            "seats.mismatcher: unknown key 'speed'; Copycat takes no keys",
        ),
        (
            "seats.dealer.kind='pennies_random'",
            "seats.dealer: unknown seat 'dealer'; the env's seats are matcher, mismatcher",
        ),
        (
            "grid.env.kwargs.rounds=3",
            "grid.env.kwargs.rounds: expected a non-empty list of values to cross, got 3",
        ),
        ("grid.env.kwargs.rounds=[]", "grid.env.kwargs.rounds: expected a non-empty list"),
        ("grid.colour=[1]", "grid.colour: unknown key 'colour'; a grid path starts with one of"),
        ("probes=[{name='mindreader'}]", "probes[0].name: unknown probe 'mindreader'"),
    ],
)
def test_bad_config_names_the_key_and_what_is_allowed(tmp_path, override, message):
    with pytest.raises(config.ConfigError) as error:
        config.load(str(write(tmp_path, GOOD)), [override])
    assert message in str(error.value)


def test_grid_value_of_the_wrong_kind_is_caught_before_running(tmp_path):
    with pytest.raises(
        config.ConfigError, match=r"grid cell .*env.kwargs.rounds: must be an integer >= 1, got -1"
    ):
        config.load(str(write(tmp_path, GOOD)), ["grid.env.kwargs.rounds=[2, -1]"])


def test_missing_required_key(tmp_path):
    with pytest.raises(config.ConfigError, match="seats: required key missing"):
        config.load(str(write(tmp_path, 'name = "x"\n[env]\nid = "matching_pennies_v0"\n')))


@pytest.mark.parametrize(
    "override",
    [
        "episodes=-1",
        "env.kwargs.roundz=3",
        "seats.mismatcher.kind='genius'",
        "grid.env.kwargs.rounds=[2, 0]",
    ],
)
def test_cli_bad_config_exits_2_and_writes_nothing(tmp_path, capsys, override):
    out = tmp_path / "out"
    code = main(
        ["run", str(write(tmp_path, GOOD)), "--out", str(out), "--set", override, "--quiet"]
    )
    assert code == 2
    assert not out.exists()
    assert "socialsim: error: " in capsys.readouterr().err


def test_every_bundled_experiment_file_is_valid():
    names = config.bundled_experiments()
    assert "matching_pennies" in names
    for name in names:
        try:
            experiment = config.load(name)
        except config.ConfigError as error:  # a co-play file whose policy is not trained here
            assert name.startswith("llm_rl_") and "no policy file at" in str(error), (name, error)
            continue
        assert experiment.specs(), name


def test_environment_variables_are_expanded_with_defaults(tmp_path, monkeypatch):
    text = GOOD.replace('name = "pennies"', 'name = "${EXP_NAME:-fallback}"').replace(
        "[seats.mismatcher]\nkind", "[seats.mismatcher]\nkind"
    )
    monkeypatch.delenv("EXP_NAME", raising=False)
    assert config.load(str(write(tmp_path, text))).name == "fallback"
    monkeypatch.setenv("EXP_NAME", "from_env")
    assert config.load(str(write(tmp_path, text))).name == "from_env"
    with pytest.raises(
        config.ConfigError, match="name: the environment variable NOPE_UNSET is not set"
    ):
        config.load(
            str(write(tmp_path, GOOD.replace('name = "pennies"', 'name = "${NOPE_UNSET}"')))
        )


def test_a_seat_named_for_one_parameter_gets_its_own_copy_of_the_default():
    cfg = {"seats": {"*": {"kind": "x", "model": {"t": 1}}, "b": {"p": 2}}}
    config.fill_named_seats(cfg)
    cfg["seats"]["b"]["model"]["t"] = 9
    assert cfg["seats"]["*"]["model"] == {"t": 1}
    assert cfg["seats"]["b"] == {"kind": "x", "model": {"t": 9}, "p": 2}


def test_set_of_a_key_the_grid_sweeps_replaces_the_axis_and_says_so(tmp_path):
    experiment = config.load(str(write(tmp_path, GOOD)), ["env.kwargs.rounds=3"])
    assert [cell for cell, _ in experiment.cells] == [
        {"seats.matcher.p_heads": 0.0},
        {"seats.matcher.p_heads": 1.0},
    ]
    assert {s.env_kwargs["rounds"] for s in experiment.specs()} == {3}
    assert experiment.config["grid"] == {"seats.matcher.p_heads": [0.0, 1.0]}
    assert experiment.notes == (
        "--set env.kwargs.rounds=3 replaces the grid axis env.kwargs.rounds = [2, 4]",
    )


def test_set_of_a_table_replaces_the_axes_below_it_and_the_last_axis_drops_the_grid(tmp_path):
    experiment = config.load(
        str(write(tmp_path, GOOD)),
        ["env.kwargs={rounds = 5}", "seats.matcher={kind = 'pennies_copycat'}"],
    )
    assert [cell for cell, _ in experiment.cells] == [{}]
    assert "grid" not in experiment.config
    assert experiment.specs()[0].seats["matcher"] == {"kind": "pennies_copycat"}
    assert len(experiment.notes) == 2


def test_set_inside_a_value_the_grid_sweeps_is_refused_naming_the_axis(tmp_path):
    text = GOOD.replace('"env.kwargs.rounds" = [2, 4]', '"env.kwargs" = [{rounds = 2}]')
    with pytest.raises(config.ConfigError, match=r"the grid sweeps env.kwargs, which holds"):
        config.load(str(write(tmp_path, text)), ["env.kwargs.rounds=3"])


def test_bundled_quickstart_overrides_reach_the_episodes():
    experiment = config.load("align_quickstart", ["seats.*.kind=always_defect"])
    kinds = {s: spec.seats[s]["kind"] for spec in experiment.specs() for s in spec.seats}
    assert kinds == {**{f"agent_{i}": "always_defect" for i in range(8)}, "agent_8": "entrant"}
    experiment = config.load("align_quickstart", ["env.kwargs.gossip=false"])
    assert {s.env_kwargs["gossip"] for s in experiment.specs()} == {False}
    with pytest.raises(
        config.ConfigError, match=r"env.kwargs.gossip: must be true or false, got 'yes'"
    ):
        config.load("align_quickstart", ["env.kwargs.gossip=yes"])


def test_a_seats_star_parameter_reaches_every_named_seat_whose_kind_takes_it():
    experiment = config.load("align_norms")
    for spec in experiment.specs():
        norm = spec.cell["seats.*.norm"]
        # the named defectors and cooperator (kinds of their own) get the cell's norm, and so
        # does the liar, whichever order the grid's axes come in
        assert {s: spec.seats[s].get("norm") for s in spec.seats} == {
            f"agent_{i}": norm for i in range(9)
        }
    # the grid's own values are not rewritten (the cell label stays what the file says)
    assert experiment.config["grid"]["seats.agent_3"] == [{}, {"kind": "liar", "mode": "invert"}]
    # --set does the same; a named seat whose kind does not take the parameter keeps its spec
    quick = config.load("align_norms", ["seats.*.norm=stern_judging"])
    assert {spec.seats["agent_4"]["norm"] for spec in quick.specs()} == {"stern_judging"}
    entrant = config.load("llm_align_entrant", ["seats.*.model.api_base=http://127.0.0.1:1/v1"])
    assert {tuple(spec.seats["agent_8"]) for spec in entrant.specs()} == {("kind",)}
    # a seat that sets the parameter itself keeps its own value
    own = config.load("align_norms", ["seats.agent_4.norm=image_scoring"])
    assert {spec.seats["agent_4"]["norm"] for spec in own.specs()} == {"image_scoring"}


def test_set_seats_star_merges_into_a_seat_s_own_model_table():
    base = "http://127.0.0.1:8000/v1"
    experiment = config.load(
        "llm_decrypto_piaget",
        [f"seats.*.model.api_base={base}", "seats.interceptor.model.model=openai/other"],
    )
    seats = experiment.specs()[0].seats
    assert {seats[s]["model"]["api_base"] for s in seats} == {base}
    assert seats["interceptor"]["model"]["model"] == "openai/other"
    assert seats["interceptor"]["model"]["max_tokens"] == 1000  # its own table, merged into


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("seed=-1", "seed: must be an integer >= 0, got -1"),
        ("seats.matcher.p_heads=yes", "seats.matcher.p_heads: expected a number, got 'yes' (str)"),
        ("seats.matcher.p_heads=2.0", "seats.matcher: pennies_random: p_heads: must be in [0, 1]"),
    ],
)
def test_bad_seed_and_agent_parameters_are_config_errors(tmp_path, override, message):
    with pytest.raises(config.ConfigError) as error:
        config.load(str(write(tmp_path, GOOD)), [override])
    assert message in str(error.value)


def test_a_seat_s_key_variable_must_be_set_before_anything_runs(monkeypatch):
    monkeypatch.delenv("NO_SUCH_KEY_VARIABLE", raising=False)
    with pytest.raises(
        config.ConfigError,
        match=r"seats\.\*\.model\.api_key_env: the environment variable "
        r"'NO_SUCH_KEY_VARIABLE' is not set",
    ):
        config.load("llm_decrypto_piaget", ["seats.*.model.api_key_env=NO_SUCH_KEY_VARIABLE"])
    monkeypatch.setenv("NO_SUCH_KEY_VARIABLE", "sk-test")
    config.load("llm_decrypto_piaget", ["seats.*.model.api_key_env=NO_SUCH_KEY_VARIABLE"])
