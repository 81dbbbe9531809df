"""The Gymnasium seat views: the Gymnasium contract, seeding, the runner's episodes, vector envs."""

import subprocess
import sys

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from socialsim.envs.decrypto.protocol import CODES

import socialsim  # noqa: F401 - registers the socialsim/... ids
from socialsim import registry
from socialsim.episode import EpisodeSpec
from socialsim.rl.registration import VIEWS
from socialsim.rl.view import SeatView
from socialsim.runner import play_episode
from socialsim.seeding import agent_seed

POPULATION = {"agent_0": {"kind": "stern_judging"}} | {
    f"agent_{i}": {"kind": "always_defect" if i >= 5 else "stern_judging"} for i in range(1, 7)
}
GOSSIP_KWARGS = {"n_agents": 7, "schedule": "random", "rounds": 12}


def first_legal(observation) -> int:
    return int(np.flatnonzero(observation["action_mask"])[0])


def play(view, seed, policy=first_legal):
    observation, info = view.reset(seed=seed)
    trajectory, done = [], False
    while not done:
        action = policy(observation)
        observation, reward, terminated, truncated, info = view.step(action)
        trajectory.append((action, reward, observation["observation"].tolist()))
        done = terminated or truncated
    return trajectory


@pytest.mark.parametrize("env_id", sorted(VIEWS))
def test_every_registered_view_passes_gymnasiums_check_env(env_id):
    view = gymnasium.make(env_id).unwrapped
    assert isinstance(view, SeatView)
    check_env(view, skip_render_check=True)


def test_the_view_with_features_and_a_decrypto_guesser_pass_check_env():
    check_env(SeatView("donation_v0", "agent_3", {"kind": "image_scoring"}, ["counterpart"]))
    view = gymnasium.make(
        "socialsim/Decrypto-v0",
        seat="decoder",
        others={
            "encoder": {"kind": "decrypto_random_encoder"},
            "interceptor": {"kind": "decrypto_random_guesser"},
        },
    ).unwrapped
    check_env(view)
    assert view.action_space == gymnasium.spaces.Discrete(len(CODES))


def test_a_seeded_view_gives_identical_trajectories_twice():
    others = list(POPULATION.values())[1:]
    view = SeatView("donation_v0", "agent_0", others, **GOSSIP_KWARGS)
    assert play(view, 5) == play(view, 5)
    again = SeatView("donation_v0", "agent_0", others, **GOSSIP_KWARGS)
    view.reset(seed=3)
    again.reset(seed=3)
    # without a seed the next episode seed comes from the view's np_random
    assert play(view, None) == play(again, None)
    assert view.record.seed == again.record.seed != 3


@pytest.mark.parametrize(
    ("env_id", "kwargs", "seat", "seats"),
    [
        ("donation_v0", GOSSIP_KWARGS, "agent_0", POPULATION),
        (
            "prisoners_v0",
            {"n_agents": 4},
            "agent_1",
            {f"agent_{i}": {"kind": "stern_judging"} for i in range(4)},
        ),
        (
            "decrypto_v0",
            {},
            "interceptor",
            {
                "encoder": {"kind": "decrypto_random_encoder"},
                "decoder": {"kind": "decrypto_random_guesser"},
                "interceptor": {"kind": "decrypto_random_guesser"},
            },
        ),
    ],
)
def test_the_views_episode_is_the_runners_for_the_same_seed_and_agents(env_id, kwargs, seat, seats):
    """A scripted agent in the learner's seat, fed what the view gives it, replays the runner's
    episode message for message."""
    others = {a: s for a, s in seats.items() if a != seat}
    view = SeatView(env_id, seat, others, learner=seats[seat], **kwargs)
    for seed in (0, 1):
        agent = registry.build_agent(seats[seat])
        agent.reset(seat, seat, agent_seed(seed, seat))
        observation, info = view.reset(seed=seed)
        done, total = False, 0.0
        while not done:
            action = agent.act(observation, view.messages, info)
            observation, reward, terminated, truncated, info = view.step(action)
            total += reward
            done = terminated or truncated
        ours = view.record
        theirs = play_episode(EpisodeSpec(env_id, seed, seats, kwargs, episode=ours.episode))
        assert theirs.status == "done"
        for field in ("messages", "steps", "returns", "summary", "counters", "seats"):
            assert getattr(ours, field) == getattr(theirs, field), field
        assert total == pytest.approx(ours.returns[seat])


def test_action_masks_is_the_observations_mask_and_ends_with_the_no_op_only():
    view = SeatView("donation_v0", "agent_0", {"kind": "stern_judging"}, n_agents=4)
    observation, _ = view.reset(seed=0)
    done = False
    while not done:
        assert view.action_masks().tolist() == observation["action_mask"].astype(bool).tolist()
        assert view.record is None
        observation, _, terminated, truncated, _ = view.step(first_legal(observation))
        done = terminated or truncated
    assert observation["action_mask"].tolist() == [1, 0, 0, 0, 0, 0, 0]
    assert view.record is not None and view.record.status == "done"


def test_bad_others_name_the_seats():
    with pytest.raises(ValueError, match="one agent spec per other seat"):
        SeatView("donation_v0", "agent_0", [{"kind": "stern_judging"}], n_agents=4)
    with pytest.raises(ValueError, match="missing"):
        SeatView("donation_v0", "agent_0", {"agent_1": {"kind": "stern_judging"}}, n_agents=4)
    with pytest.raises(ValueError, match="seat: 'agent_9'"):
        SeatView("donation_v0", "agent_9", {"kind": "stern_judging"}, n_agents=4)
    with pytest.raises(ValueError, match="unknown agent kind"):
        SeatView("donation_v0", "agent_0", {"kind": "nobody"}, n_agents=4)


def test_gymnasium_module_id_form_works_in_a_fresh_interpreter():
    code = (
        "import gymnasium\n"
        "env = gymnasium.make('socialsim:socialsim/Donation-v0', seat='agent_1', "
        "others={'kind': 'always_defect'}, n_agents=4)\n"
        "obs, info = env.reset(seed=0)\n"
        "print(type(env.unwrapped).__name__, *sorted(obs), info['decision'] is not None)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["SeatView", "action_mask", "observation", "True"]


def make_view():
    return SeatView(
        "donation_v0", "agent_0", {"kind": "stern_judging"}, ["counterpart"], n_agents=4
    )


@pytest.mark.parametrize(
    "vector", [gymnasium.vector.SyncVectorEnv, gymnasium.vector.AsyncVectorEnv]
)
def test_the_view_runs_vectorised(vector):
    envs = vector([make_view, make_view])
    try:
        observations, _ = envs.reset(seed=[0, 1])
        assert observations["action_mask"].shape == (2, 7)
        assert observations["counterpart"].shape == (2, 11)
        steps = 0
        for _ in range(20):  # past the end of the episodes: the vector env resets them
            masks = observations["action_mask"]
            actions = np.array([int(np.flatnonzero(m)[0]) if m.any() else 0 for m in masks])
            observations, rewards, terminated, truncated, _ = envs.step(actions)
            steps += 1
        assert steps == 20
    finally:
        envs.close()
    single = make_view()
    first, _ = single.reset(seed=0)
    again = vector([make_view])
    try:
        vectored, _ = again.reset(seed=[0])
    finally:
        again.close()
    assert np.array_equal(vectored["observation"][0], first["observation"])


def test_process_vector_env_gives_the_sync_vector_envs_steps_with_envs_batched_per_worker():
    from socialsim.rl.vector import ProcessVectorEnv

    sync = gymnasium.vector.SyncVectorEnv([make_view] * 5)
    batched = ProcessVectorEnv([make_view] * 5, workers=2)
    try:
        assert batched.observation_space == sync.observation_space
        assert batched.single_action_space == sync.single_action_space
        ours, our_info = batched.reset(seed=3)
        theirs, their_info = sync.reset(seed=3)
        ended = 0
        for _ in range(25):  # past the end of the 4-agent episodes: next-step autoreset
            for key in theirs:
                assert np.array_equal(ours[key], theirs[key]), key
            assert sorted(our_info) == sorted(their_info)
            for key in their_info:
                assert our_info[key].tolist() == their_info[key].tolist(), key
            masks = theirs["action_mask"]
            actions = np.array([int(np.flatnonzero(m)[-1]) if m.any() else 0 for m in masks])
            ours, our_rewards, our_ends, our_cuts, our_info = batched.step(actions)
            theirs, rewards, ends, cuts, their_info = sync.step(actions)
            assert our_rewards.tolist() == rewards.tolist()
            assert our_ends.tolist() == ends.tolist() and our_cuts.tolist() == cuts.tolist()
            ended += int(ends.sum())
        assert ended >= 5  # every env finished an episode and went on
    finally:
        batched.close()
        sync.close()


def test_process_vector_env_raises_a_workers_error_with_its_traceback():
    from socialsim.rl.vector import ProcessVectorEnv

    with pytest.raises(ValueError, match="workers: must be an integer >= 1"):
        ProcessVectorEnv([make_view], workers=0)
    envs = ProcessVectorEnv([make_view] * 2, workers=2)
    try:
        envs.reset(seed=0)
        with pytest.raises(RuntimeError, match="a ProcessVectorEnv worker failed"):
            envs.step(np.array([99, 99]))  # not an action of Discrete(7)
    finally:
        envs.close()
