"""The culture donor game (culture_v0): its arithmetic, its ceiling, its contract."""

from __future__ import annotations

import pytest
from socialsim.envs import culture_v0
from socialsim.envs.culture import protocol as p

from socialsim.testing import check_env


def play(action, seed=0, **kwargs):
    env = culture_v0.parallel_env(**kwargs)
    env.reset(seed=seed)
    while env.agents:
        env.step({a: action for a in env.deciding()})
    return env


def test_the_ceiling_of_the_paper_defaults_is_30720():
    assert p.ceiling(p.Options()) == 30720.0


def test_everyone_giving_everything_reaches_the_ceiling_exactly():
    env = play(p.action_of("give", 1.0))
    assert env.summary()["mean_resources"] == 30720.0
    assert env.summary()["donated_fraction"] == 1.0


def test_nobody_giving_keeps_the_starting_resources():
    env = play(0)
    assert set(env.summary()["resources"].values()) == {10.0}


def test_a_gift_is_doubled_and_a_punishment_costs_the_punished_twice():
    env = culture_v0.parallel_env(n_agents=2, rounds=2, punishment=True)
    env.reset(seed=0)
    (donor,) = env.deciding()
    env.step({donor: p.action_of("give", 0.5)})  # donor 10 -> 5, recipient 10 -> 20
    (punisher,) = env.deciding()
    assert punisher != donor  # the roles alternate
    env.step({punisher: p.action_of("punish", 0.1)})  # 20 -> 18, the punished 5 -> 1
    assert env.summary()["resources"] == {donor: 1.0, punisher: 18.0}


def test_punishing_without_the_option_falls_back_to_giving_nothing():
    env = culture_v0.parallel_env(n_agents=2, rounds=1)
    env.reset(seed=0)
    (donor,) = env.deciding()
    *_, infos = env.step({donor: p.action_of("punish", 0.5)})
    assert infos[donor]["invalid_action"]["fallback"] == p.FALLBACK
    assert set(env.summary()["resources"].values()) == {10.0}


def test_a_donor_sees_its_recipients_last_decisions_up_to_the_trace_depth():
    env = culture_v0.parallel_env(n_agents=2, rounds=6, trace_depth=2)
    env.reset(seed=0)
    for fraction in (0.1, 0.2, 0.3, 0.4, 0.5):
        env.step({a: p.action_of("give", fraction) for a in env.deciding()})
    (donor,) = env.deciding()
    view = [m for m in env.bus.read(donor) if m.kind == p.RECIPIENT][-1].payload
    assert [t["fraction"] for t in view["trace"]] == [0.3, 0.5]  # the other's rounds 3 and 5


def test_a_strategy_text_in_an_action_is_kept_on_the_bus():
    env = culture_v0.parallel_env(n_agents=2, rounds=1)
    env.reset(seed=0)
    (donor,) = env.deciding()
    env.step({donor: {"donate": 3, "strategy": "Give a little."}})
    kept = [m for m in env.bus.log if m.kind == p.STRATEGY]
    assert [(m.to, dict(m.payload)) for m in kept] == [((donor,), {"text": "Give a little."})]


def test_an_odd_population_is_refused_by_name():
    with pytest.raises(ValueError, match="n_agents: must be even"):
        culture_v0.parallel_env(n_agents=5)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("kwargs", [{}, {"punishment": True, "n_agents": 4, "rounds": 3}])
def test_culture_v0_keeps_the_env_contract(kwargs):
    check_env("culture_v0", env_kwargs=kwargs)
