"""socialsim.rl.plain: numeric infos, one space for every role and Box observations, in either
form, each passing PettingZoo's own tests where their sampling applies."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest
from pettingzoo.test import api_test, parallel_api_test
from socialsim.envs import decrypto_v0, donation_v0

from socialsim.rl.plain import box_observations, numeric_infos, padded_roles

WRAPPERS = {
    "numeric": numeric_infos,
    "padded": padded_roles,
    "numeric+padded": lambda env: numeric_infos(padded_roles(env)),
}


@pytest.mark.parametrize("wrapper", WRAPPERS)
@pytest.mark.parametrize("module", [donation_v0, decrypto_v0])
def test_wrapped_forms_pass_pettingzoo_api_tests(module, wrapper):
    wrap = WRAPPERS[wrapper]
    with contextlib.redirect_stdout(io.StringIO()):
        api_test(wrap(module.env()), num_cycles=20)
        parallel_api_test(wrap(module.parallel_env()), num_cycles=20)


def test_numeric_infos_hold_the_same_keys_of_numbers_for_every_seat_and_step():
    env = numeric_infos(decrypto_v0.parallel_env())
    _, infos = env.reset(seed=0)
    assert infos["encoder"]["deciding"] == 1 and infos["decoder"]["deciding"] == 0
    assert infos["decoder"]["action_mask"] == (1,) + (0,) * 23  # the no-op
    _, _, _, _, infos = env.step({"encoder": 5})  # the first of three hints
    for info in infos.values():
        assert sorted(info) == ["action_mask", "deciding", "invalid_action"]


def test_numeric_infos_flag_a_fallback_with_a_one():
    env = numeric_infos(donation_v0.parallel_env(n_agents=3))
    env.reset(seed=0)
    _, _, _, _, infos = env.step({"agent_0": 4})  # a tone where a donation is due
    assert infos["agent_0"]["invalid_action"] == 1 and infos["agent_1"]["invalid_action"] == 0


def test_aec_numeric_infos_are_those_of_last():
    env = numeric_infos(decrypto_v0.env())
    env.reset(seed=0)
    _, _, _, _, info = env.last()
    assert info == env.infos["encoder"] and info["deciding"] == 1


def test_padded_roles_give_decrypto_one_space_and_a_seat_one_hot():
    inner = decrypto_v0.parallel_env()
    env = padded_roles(inner)
    V = inner.action_space("encoder").n
    size = inner.observation_space("decoder")["observation"].shape[0]
    assert {env.action_space(a).n for a in env.possible_agents} == {V}
    assert len({id(env.observation_space(a)) for a in env.possible_agents}) == 1
    observations, _ = env.reset(seed=0)
    decoder = observations["decoder"]
    assert decoder["observation"].shape == (size + 3,)
    assert decoder["observation"][size:].tolist() == [0, 1, 0]
    assert decoder["action_mask"].tolist() == [1] + [0] * (V - 1)
    assert env.observation_space("decoder").contains(decoder)


def test_box_observations_are_the_vector_then_the_mask_as_float32():
    inner = donation_v0.parallel_env(n_agents=3)
    env = box_observations(inner)
    observations, _ = env.reset(seed=0)
    raw = inner.observe("agent_0")
    expected = np.concatenate([raw["observation"], raw["action_mask"]]).astype(np.float32)
    assert observations["agent_0"].tolist() == expected.tolist()
    assert env.observation_space("agent_0").contains(observations["agent_0"])


def test_padded_roles_refuse_a_space_that_is_not_discrete():
    class Fake:
        possible_agents = ["a"]

        def action_space(self, agent):
            from gymnasium import spaces

            return spaces.MultiDiscrete([2, 2])

        def observation_space(self, agent):
            return None

    with pytest.raises(ValueError, match="padded_roles: every action space must be Discrete"):
        padded_roles(Fake())


def test_a_padded_index_past_a_seat_s_own_space_plays_its_action_0():
    env = padded_roles(decrypto_v0.parallel_env())
    env.reset(seed=0)
    env.step({"encoder": {"hints": ["red", "blue", "green"]}})
    env.step({"decoder": 300, "interceptor": 300})  # past the 24 codes: code 0, 1-2-3
    assert env.unwrapped.game.turn_log[0].decoder_guess == (1, 2, 3)
