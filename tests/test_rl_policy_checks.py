"""A trained policy's file is loaded and its spaces checked when the seats are built: a missing
or unfit file is a configuration error naming the seat and the path, at `run --check`, `run`,
`play` and as a 422 in `serve`; a relative path is read against the experiment file's folder."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("sb3_contrib")
from sb3_contrib import MaskablePPO  # noqa: E402

from socialsim.cli import main  # noqa: E402
from socialsim.records import read_records  # noqa: E402
from socialsim.rl.view import SeatView  # noqa: E402

EXPERIMENT = """\
name = "rl_check"
episodes = 2
[env]
id = "donation_v0"
kwargs = {{ n_agents = {n_agents} }}
[seats."*"]
kind = "image_scoring"
[seats.agent_0]
kind = "rl"
path = "{path}"
"""


def save_policy(path, n_agents=4):
    """An untrained (seeded) MaskablePPO donor of ``n_agents`` agents saved at ``path``."""
    env = SeatView("donation_v0", "agent_0", {"kind": "image_scoring"}, n_agents=n_agents)
    MaskablePPO("MultiInputPolicy", env, n_steps=16, batch_size=16, seed=0, device="cpu").save(path)


def write(folder, path, n_agents=4):
    folder.mkdir(parents=True, exist_ok=True)
    experiment = folder / "rl_check.toml"
    experiment.write_text(EXPERIMENT.format(path=path, n_agents=n_agents))
    return experiment


@pytest.mark.parametrize("check", [True, False], ids=["check", "run"])
def test_a_missing_policy_file_exits_2_naming_the_seat_and_the_path(tmp_path, capsys, check):
    missing = tmp_path / "none.zip"
    out = tmp_path / "out"
    argv = ["run", str(write(tmp_path, missing)), "--out", str(out), "--quiet"]
    assert main(argv + (["--check"] if check else [])) == 2
    err = capsys.readouterr().err
    assert f"seats.agent_0: rl: path: no policy file at '{missing}'" in err
    assert "Traceback" not in err
    assert not out.exists()


def test_a_policy_for_other_spaces_exits_2_at_check_naming_the_seat_and_the_path(tmp_path, capsys):
    policy = tmp_path / "policy.zip"
    save_policy(policy, n_agents=4)  # an observation of 1 + 2 + 4 + 20 = 27 numbers
    out = tmp_path / "out"
    argv = ["run", str(write(tmp_path, policy, n_agents=5)), "--out", str(out), "--check"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"seats.agent_0: rl: path: the policy in {policy} takes observation Dict(" in err
    assert "seat agent_0 gives observation of shape (33,)" in err
    assert not out.exists()


def test_a_corrupt_policy_file_exits_2_naming_the_path(tmp_path, capsys):
    policy = tmp_path / "policy.zip"
    policy.write_text("not a zip")
    assert main(["run", str(write(tmp_path, policy)), "--check"]) == 2
    assert f"seats.agent_0: rl: path: '{policy}' is not a policy MaskablePPO can load" in (
        capsys.readouterr().err
    )


def test_a_relative_policy_path_is_read_against_the_experiment_files_folder(tmp_path, monkeypatch):
    lab = tmp_path / "lab"
    save_policy(lab / "policies" / "donor.zip")
    experiment = write(lab / "experiments", "../policies/donor.zip")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # the working directory has no policies/ folder
    assert main(["run", str(experiment), "--out", "out", "--quiet"]) == 0
    records = read_records(elsewhere / "out")
    assert len(records) == 2
    assert records[0].seats["agent_0"]["path"] == os.path.normpath(lab / "policies" / "donor.zip")


def test_play_with_a_missing_policy_file_exits_2_before_the_game(tmp_path, capsys):
    missing = tmp_path / "none.zip"
    argv = ["play", "donation", "--as", "agent_1", "--out", str(tmp_path / "game")]
    argv += ["--with", f'agent_0={{kind = "rl", path = "{missing}"}}']
    assert main(argv) == 2
    assert f"seats.agent_0: rl: path: no policy file at '{missing}'" in capsys.readouterr().err
    assert not (tmp_path / "game").exists()


def test_serve_refuses_a_policy_path_in_an_upload_with_422_and_reads_no_file(tmp_path):
    """A policy file is the operator's to name: an upload that names one is refused, naming the
    key, before the path is looked at."""
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from socialsim.web.app import create_app

    missing = tmp_path / "none.zip"
    upload = EXPERIMENT.format(path=missing, n_agents=4)
    body = {"upload": upload, "humans": ["agent_1"], "seed": 0}
    headers = {"Authorization": "Bearer host-secret"}
    with TestClient(create_app(tmp_path / "results", "host-secret")) as client:
        response = client.post("/api/sessions", headers=headers, json=body)
    assert response.status_code == 422
    assert "seats.agent_0.path: not allowed in an uploaded experiment" in response.text
    assert "no policy file" not in response.text


def test_serve_refuses_an_offered_file_with_a_missing_policy_before_it_serves(tmp_path):
    """An operator's offered file is checked when the server starts: a missing policy is a
    configuration error naming the seat and the path (``serve`` exits 2), not a session that
    waits for ever."""
    pytest.importorskip("starlette")
    from socialsim.config import ConfigError
    from socialsim.web.app import create_app

    offered = write(tmp_path / "offered", "none.zip")
    with pytest.raises(ConfigError) as refused:
        create_app(tmp_path / "results", "host-secret", offered=[offered])
    missing = tmp_path / "offered" / "none.zip"
    assert f"seats.agent_0: rl: path: no policy file at '{missing}'" in str(refused.value)
