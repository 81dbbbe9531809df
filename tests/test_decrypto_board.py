"""Decrypto's observation vector is built from named parts: the layout's slices are the
documented table, and a played turn lands in the parts the table names."""

import pytest
from socialsim.envs import decrypto_v0
from socialsim.envs.decrypto.board import Layout
from socialsim.envs.decrypto.protocol import CODE_INDEX


def test_the_layout_names_the_documented_slices():
    parts = Layout(8).parts
    assert parts == {
        "turn": slice(0, 1),
        "decision": slice(1, 2),
        "tokens": slice(2, 4),
        "keywords": slice(4, 8),
        "code": slice(8, 11),
        "hints": slice(11, 14),
        "hint_history": slice(14, 46),
        "codes_played": slice(46, 70),
        "guesses": slice(70, 86),
    }
    assert Layout(8).size == 14 + 9 * 8


def test_a_played_turn_lands_in_the_named_parts_of_every_seat_s_vector():
    keywords = decrypto_v0.parallel_env().words[:4]
    env = decrypto_v0.parallel_env(
        max_turns=3, keywords=keywords, codes=["3-1-4", "1-2-3", "2-4-1"]
    )
    env.reset(seed=0)
    env.step({"encoder": [0, 1, 2]})
    observations, *_ = env.step({"decoder": CODE_INDEX[3, 1, 4], "interceptor": 0})
    N, V = len(env.words), len(env.hint_vocabulary)
    none = V + 1
    history = [1, none, none, none, none, none, 0, none, none, 2, none, none]  # keyword k, slot s
    tail = history + [3, 1, 4] + [0] * 6 + [CODE_INDEX[3, 1, 4], 0] + [24] * 4
    words = list(range(4))
    assert observations["encoder"]["observation"].tolist() == [2, 1, 0, 0, *words, 1, 2, 3, none, none, none, *tail]  # fmt: skip
    assert observations["decoder"]["observation"].tolist() == [2, 0, 0, 0, *words, 0, 0, 0, none, none, none, *tail]  # fmt: skip
    assert observations["interceptor"]["observation"].tolist() == [2, 0, 0, 0, *[N] * 4, 0, 0, 0, none, none, none, *tail]  # fmt: skip
    assert env.state().tolist() == [2, 1, 0, 0, *words, 1, 2, 3, none, none, none, *tail]


def test_a_pickled_env_plays_its_own_board_as_a_new_env_would():
    cloudpickle = pytest.importorskip("cloudpickle")  # what vector envs copy envs with
    copy = cloudpickle.loads(cloudpickle.dumps(decrypto_v0.parallel_env()))
    fresh = decrypto_v0.parallel_env()
    for env in (copy, fresh):
        env.reset(seed=1)
        env.step({"encoder": {"hints": ["red", "blue", "green"]}})
    assert copy.state().tolist() == fresh.state().tolist()
    assert copy._board.hints is not fresh._board.hints
