"""PettingZoo's whole test suite passes on every bundled env, in both forms (the kit's
:mod:`socialsim.testing.pettingzoo_suite`), and the forms keep the no-op convention
(``socialsim.envs``' contract): an agent without a decision may play only action 0, ignored."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.utils.conversions import aec_to_parallel, turn_based_aec_to_parallel
from socialsim.envs import decrypto_v0, donation_v0, matching_pennies_v0

from socialsim import registry
from socialsim.testing.pettingzoo_suite import TESTS, run_pettingzoo_test


@pytest.mark.parametrize("test", TESTS)
@pytest.mark.parametrize("env_id", registry.ENV_IDS)
def test_pettingzoo_suite_passes(env_id, test):
    run_pettingzoo_test(env_id, test)


def test_unknown_suite_test_names_the_allowed_ones():
    with pytest.raises(ValueError, match="test: unknown test 'stat'; allowed: api, "):
        run_pettingzoo_test("donation_v0", "stat")


def test_aec_form_declares_state_space_of_the_parallel_env():
    env = donation_v0.env(n_agents=3)
    assert env.state_space is env.parallel.state_space
    env.reset(seed=0)
    assert env.state_space.contains(env.state())


def test_only_an_aec_form_that_asks_everyone_each_step_is_parallelizable():
    assert matching_pennies_v0.env().metadata["is_parallelizable"] is True
    assert donation_v0.env().metadata["is_parallelizable"] is False
    assert donation_v0.raw_env.metadata["is_parallelizable"] is False
    with pytest.raises(AssertionError, match="is_parallelizable"):
        aec_to_parallel(donation_v0.env())
    assert turn_based_aec_to_parallel(donation_v0.env()).possible_agents[0] == "agent_0"


def test_agent_without_a_decision_may_play_only_the_no_op():
    env = donation_v0.parallel_env(n_agents=3)
    observations, infos = env.reset(seed=0)
    idle = [a for a in env.agents if infos[a]["decision"] is None]
    assert idle == ["agent_1", "agent_2"]  # agent_0 donates first; its recipient waits
    for agent in idle:
        assert observations[agent]["action_mask"].tolist() == [1, 0, 0, 0, 0, 0, 0]
    before = [m.id for m in env.bus.log]
    _, _, _, _, infos = env.step({"agent_0": 1, "agent_1": 0, "agent_2": 0})  # no-ops ignored
    assert [m.kind for m in env.bus.log if m.id not in before] == ["action"]
    assert "invalid_action" not in infos["agent_1"] and infos["agent_1"]["decision"] == "gossip"


def test_decrypto_seats_without_a_decision_may_play_only_the_no_op():
    env = decrypto_v0.parallel_env()
    observations, _ = env.reset(seed=3)
    V = env.action_space("encoder").n
    assert np.flatnonzero(observations["decoder"]["action_mask"]).tolist() == [0]
    assert observations["encoder"]["action_mask"].shape == (V,)
    observations, *_ = env.step({"encoder": {"hints": ["red", "blue", "green"]}})
    assert np.flatnonzero(observations["encoder"]["action_mask"]).tolist() == [0]
