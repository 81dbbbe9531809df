"""Every bundled env is in PettingZoo's registry (1.27) in both forms, beside the Gymnasium ids
of the seat views: ``pettingzoo.make("aec", "socialsim/donation-v0")`` is ``donation_v0.env()``."""

import pettingzoo
import pytest
from pettingzoo import AECEnv, ParallelEnv

import socialsim  # noqa: F401 - registers the ids
from socialsim.registry import ENV_IDS
from socialsim.rl.registration import pettingzoo_id

FORMS = [("aec", AECEnv), ("parallel", ParallelEnv)]


def test_the_ids_are_the_env_ids_in_pettingzoo_s_spelling():
    assert pettingzoo_id("donation_v0") == "socialsim/donation-v0"
    assert pettingzoo_id("matching_pennies_v0") == "socialsim/matching_pennies-v0"


@pytest.mark.parametrize("env_id", ENV_IDS)
@pytest.mark.parametrize(("form", "kind"), FORMS)
def test_every_env_is_made_by_pettingzoo_s_registry_in_both_forms(env_id, form, kind):
    env = pettingzoo.make(form, pettingzoo_id(env_id))
    assert isinstance(env, kind)
    ours = socialsim.make(env_id, form)
    assert env.possible_agents == ours.possible_agents
    assert type(env.unwrapped) is type(ours.unwrapped)


def test_the_registry_passes_keyword_arguments_to_the_env():
    env = pettingzoo.make("parallel", "socialsim/donation-v0", n_agents=6)
    assert len(env.possible_agents) == 6


def test_registering_again_changes_nothing_and_warns_nothing(recwarn):
    from socialsim.rl.registration import register

    register()
    assert not [w for w in recwarn if "Overriding" in str(w.message)]
