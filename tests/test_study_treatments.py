"""Crossed treatments in a study file: every combination of the crossed keys' values is a
treatment with a name made of its values, assigned as listed treatments are, and checked with
one line naming the field."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from socialsim import study as study_module
from socialsim.config import ConfigError

EXAMPLE = Path(__file__).parent.parent / "experiments" / "study_donation"


def crossed_study(tmp_path: Path, cross: str) -> Path:
    """The example study with its listed treatments replaced by ``[treatments.cross]``."""
    folder = tmp_path / "study"
    shutil.copytree(EXAMPLE, folder)
    path = folder / "study.toml"
    text = path.read_text(encoding="utf-8")
    head, _, rest = text.partition("[[treatments]]")
    _, _, tail = rest.partition("[pages]")
    path.write_text(f"{head}[treatments.cross]\n{cross}\n\n[pages]{tail}", encoding="utf-8")
    return path


CROSS = 'experiment = ["game_llm.toml", "game_scripted.toml"]\nenv.kwargs.rounds = [4, 6]'


def test_a_cross_makes_every_combination_a_treatment_named_after_its_values(tmp_path):
    study = study_module.load(crossed_study(tmp_path, CROSS))
    folder = tmp_path.resolve() / "study"
    assert [t.name for t in study.treatments] == [
        "game_llm-rounds_4",
        "game_llm-rounds_6",
        "game_scripted-rounds_4",
        "game_scripted-rounds_6",
    ]
    last = study.treatments[-1]
    assert last.experiment == str(folder / "game_scripted.toml")
    assert last.overrides == ("env.kwargs.rounds=6",)
    assert last.factors == (("experiment", "game_scripted.toml"), ("env.kwargs.rounds", 6))


def test_a_quoted_dotted_key_crosses_as_the_nested_one(tmp_path):
    nested = study_module.load(crossed_study(tmp_path / "a", CROSS))
    quoted = CROSS.replace("env.kwargs.rounds", '"env.kwargs.rounds"')
    assert [
        t.name for t in study_module.load(crossed_study(tmp_path / "b", quoted)).treatments
    ] == [t.name for t in nested.treatments]


def test_crossed_values_of_every_scalar_type_become_set_values_and_name_parts(tmp_path):
    cross = (
        'env.kwargs.gossip = [true, false]\n"seats.*.kind" = ["image_scoring", "always_give"]\n'
        "env.kwargs.benefit = [0.5]"
    )
    study = study_module.load(crossed_study(tmp_path, cross))
    first = study.treatments[0]
    # TOML keeps the dotted keys of one table (env.kwargs) together, in the order written
    assert first.name == "gossip_true-benefit_0.5-kind_image_scoring"
    assert first.overrides == (
        "env.kwargs.gossip=true",
        "env.kwargs.benefit=0.5",
        'seats.*.kind="image_scoring"',
    )
    assert len(study.treatments) == 4


def test_two_crossed_keys_ending_alike_are_named_by_their_whole_paths(tmp_path):
    cross = '"seats.agent_2.kind" = ["image_scoring"]\n"seats.agent_3.kind" = ["always_give"]'
    (treatment,) = study_module.load(crossed_study(tmp_path, cross)).treatments
    assert treatment.name == "seats_agent_2_kind_image_scoring-seats_agent_3_kind_always_give"


def test_crossed_treatments_are_assigned_balanced_in_turn_and_seeded(tmp_path):
    import dataclasses

    study = study_module.load(crossed_study(tmp_path, CROSS))
    assert study_module.assign(study, 9, [2, 2, 1, 2], 0.0) == 2
    arrival = dataclasses.replace(study, assignment="arrival")
    assert [study_module.assign(arrival, i, [0] * 4, 0.0) for i in range(6)] == [0, 1, 2, 3, 0, 1]
    random = dataclasses.replace(study, assignment="random")
    assert [study_module.assign(random, 0, [0] * 4, d) for d in (0.0, 0.3, 0.6, 0.99)] == [
        0,
        1,
        2,
        3,
    ]


@pytest.mark.parametrize(
    ("cross", "message"),
    [
        ("", "treatments.cross: name at least one key and its values to cross"),
        (
            "env.kwargs.rounds = 4",
            "treatments.cross.env.kwargs.rounds: expected a list of values to cross",
        ),
        ("env.kwargs.rounds = []", "treatments.cross.env.kwargs.rounds: expected a list"),
        (
            "env.kwargs.rounds = [[1], [2]]",
            "treatments.cross.env.kwargs.rounds: expected a list of values to cross",
        ),
        (
            "env.kwargs.rounds = [4, 4]",
            "treatments.cross.env.kwargs.rounds: [4, 4] names one value twice",
        ),
        (
            'experiment = ["../x.toml"]',
            "treatments.cross.experiment: '../x.toml': name a file in the study's folder",
        ),
        ("experiment = [3]", "treatments.cross.experiment: expected a string, got 3"),
        (
            'env.kwargs.note = ["' + "x" * 70 + '"]',
            "treatments.cross: the treatment 'note_xxxx",
        ),
    ],
)
def test_a_bad_cross_is_one_line_naming_the_field(tmp_path, cross, message):
    with pytest.raises(ConfigError) as error:
        study_module.load(crossed_study(tmp_path, cross))
    assert str(error.value).startswith(message)
    assert "\n" not in str(error.value)


def test_a_treatments_table_without_a_cross_or_with_another_key_is_refused(tmp_path):
    path = crossed_study(tmp_path, CROSS)
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("[treatments.cross]", "[treatments.crossed]"), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"^treatments\.crossed: unknown key 'crossed'"):
        study_module.load(path)
    path.write_text(text.replace("[treatments.cross]\n", "[treatments]\n"), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"^treatments\.experiment: unknown key"):
        study_module.load(path)


def test_a_crossed_key_the_experiment_lacks_is_refused_as_the_server_starts(tmp_path):
    pytest.importorskip("starlette")
    from socialsim.web.app import create_app

    study = study_module.load(crossed_study(tmp_path, "env.kwargs.roundz = [4, 6]"))
    with pytest.raises(ConfigError) as error:
        create_app(tmp_path / "results", "host-secret", study=study, monitor_token="m")
    assert str(error.value).startswith("treatments.roundz_4: ")
    assert "roundz" in str(error.value) and "\n" not in str(error.value)
