"""A researcher's own agent (``kind = "package.module:Class"``) and env (``env.id`` = the import
path of a shim module) play a full experiment through the CLI, and a bad name says what was
tried."""

import textwrap

import pytest

from socialsim.testing import cli

AGENT = '''
from socialsim.agent import Agent


class Tit(Agent):
    """Shows ``first``, then the other player's last face (read from the bus)."""

    def __init__(self, first: int = 0):
        self.first = first

    def reset(self, agent_id, seat, seed):
        super().reset(agent_id, seat, seed)
        self.face = self.first

    def act(self, observation, messages, info):
        other = "mismatcher" if self.agent_id == "matcher" else "matcher"
        for message in messages:
            if message.kind == "reveal":
                self.face = message.payload[other]
        return self.face


class NotAnAgent:
    pass
'''

ENV = "from socialsim.envs.matching_pennies_v0 import env, parallel_env, raw_env  # noqa: F401\n"

EXPERIMENT = """
name = "own_kinds"
episodes = 3
[env]
id = "mylab.pennies_v0"
[env.kwargs]
rounds = 5
[seats.matcher]
kind = "mylab.agents:Tit"
first = 1
[seats.mismatcher]
kind = "pennies_random"
p_heads = 1.0
[grid]
"env.form" = ["parallel", "aec"]
"""


@pytest.fixture
def lab(tmp_path):
    package = tmp_path / "lib" / "mylab"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "agents.py").write_text(AGENT)
    (package / "pennies_v0.py").write_text(ENV)
    (tmp_path / "exp.toml").write_text(textwrap.dedent(EXPERIMENT))
    return tmp_path


def socialsim(lab, *args):
    """``socialsim ARGS`` in the lab, with its ``lib`` folder on PYTHONPATH."""
    return cli.run(*args, cwd=lab, path=[lab / "lib"])


def test_own_agent_and_env_play_a_full_experiment_with_two_workers_and_appear_in_the_report(lab):
    out = lab / "out"
    run = socialsim(lab, "run", "exp.toml", "--out", str(out), "--set", "workers=2", "--quiet")
    assert run.returncode == 0, run.stderr
    assert "6/6 episodes done, 0 failed" in run.stderr
    report = socialsim(lab, "report", str(out), "--no-files")
    assert report.returncode == 0, report.stderr
    rows = [line.split() for line in report.stdout.splitlines() if "mylab.agents:Tit" in line]
    # the matcher copies heads after its first tails: it loses round 1 and wins rounds 2-5
    assert [row[-4:] for row in rows] == [["mylab.agents:Tit", "3", "3", "0"]] * 2


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (
            "seats.matcher.kind=nolab.agents:Tit",
            "seats.matcher.kind: 'nolab.agents:Tit': cannot import nolab.agents "
            "(No module named 'nolab'); put its package on PYTHONPATH or install it",
        ),
        (
            "seats.matcher.kind=mylab.agents:Tat",
            "seats.matcher.kind: 'mylab.agents:Tat': mylab.agents has no Tat; "
            "its Agent subclasses: Tit",
        ),
        (
            "seats.matcher.kind=mylab.agents:NotAnAgent",
            "mylab.agents.NotAnAgent is not a subclass of socialsim.agent.Agent",
        ),
        (
            "env.id=mylab.agents",
            "env.id: 'mylab.agents': the module mylab.agents lacks env, parallel_env, raw_env",
        ),
    ],
)
def test_a_bad_own_kind_or_env_exits_2_naming_what_was_tried(lab, override, message):
    out = lab / "out"
    run = socialsim(lab, "run", "exp.toml", "--out", str(out), "--set", override)
    assert run.returncode == 2
    assert message in run.stderr
    assert not out.exists()


ENTRY_POINTS = """
[socialsim.agents]
tit = mylab.agents:Tit
[socialsim.envs]
lab_pennies_v0 = mylab.pennies_v0
"""


def test_entry_points_register_a_kind_and_an_env_that_list_run_and_report_know(lab):
    info = lab / "lib" / "mylab-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mylab\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    listed = socialsim(lab, "list")
    assert listed.returncode == 0, listed.stderr
    assert "  lab_pennies_v0 " in listed.stdout
    assert "  tit                          mylab.agents:Tit" in listed.stdout
    out = lab / "out"
    run = socialsim(
        lab, "run", "exp.toml", "--out", str(out), "--quiet",
        "--set", "env.id=lab_pennies_v0", "--set", "seats.matcher.kind=tit",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "6/6 episodes done, 0 failed" in run.stderr
    report = socialsim(lab, "report", str(out), "--no-files")
    rows = [line.split() for line in report.stdout.splitlines() if " tit " in f" {line} "]
    assert [row[-4:] for row in rows] == [["tit", "3", "3", "0"]] * 2
