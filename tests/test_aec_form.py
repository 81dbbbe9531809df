"""The DecisionEnv base: an env that implements neither begin() nor reset() is told so."""

import pytest
from socialsim.envs.aec import DecisionEnv


class Empty(DecisionEnv):
    possible_agents = ["a"]


def test_an_env_with_neither_begin_nor_reset_names_what_it_must_implement():
    with pytest.raises(NotImplementedError, match=r"Empty: a DecisionEnv implements begin\(\)"):
        Empty().reset(seed=0)
