"""The Decrypto guesser's embedding feature, on word vectors small enough to check by hand."""

import numpy as np
import pytest
from socialsim.agents.rl.decrypto import HintHistory
from socialsim.agents.rl.policy import FEATURES
from socialsim.envs.decrypto.protocol import CODE_INDEX

from socialsim.rl import features


@pytest.fixture
def vectors(tmp_path):
    # 2-d vectors: "east" and "west" opposite, "north" at right angles, "up" half-way
    words = ["east", "west", "north", "up", "far"]
    matrix = np.array([[1, 0], [-1, 0], [0, 1], [1, 1], [3, 0]], dtype=np.float32)
    np.save(tmp_path / "tiny.npy", matrix)
    (tmp_path / "tiny.vocab.txt").write_text("\n".join(words) + "\n")
    return str(tmp_path / "tiny.npy")


def test_hint_history_holds_the_glove_interceptors_matrix_and_the_codes_played(vectors):
    feature = HintHistory(vectors)
    feature.reset("interceptor")
    info = {
        "decision": "guess",
        "hints": ["east", "north", "up"],
        # keyword 1's past hints average to (2, 0); keyword 2's is west; 3 and 4 have none
        "hint_history": [["east", "far"], ["west"], [], []],
        "code_history": [[1, 2, 3], [4, 3, 2]],
    }
    value = feature(None, [], info)
    half = np.sqrt(0.5)
    mean = np.array([[1, -1, 0, 0], [0, 0, 0, 0], [half, -half, 0, 0]], dtype=np.float32)
    assert value[0:12] == pytest.approx(mean.ravel(), abs=1e-6)
    assert value[12:24] == pytest.approx(mean.ravel(), abs=1e-6)  # east and far point one way
    assert value[24:28].tolist() == [2 / 8, 1 / 8, 0, 0]
    played = np.zeros(24)
    played[[CODE_INDEX[(1, 2, 3)], CODE_INDEX[(4, 3, 2)]]] = 1
    assert value[28:52].tolist() == played.tolist()
    # code 1-4-2: hint 1 on keyword 1 (1), hint 2 on keyword 4 (0), hint 3 on keyword 2 (-half)
    assert value[52 + CODE_INDEX[(1, 4, 2)]] == pytest.approx(1 - half, abs=1e-6)
    assert value[52 + CODE_INDEX[(2, 3, 1)]] == pytest.approx(-1 + half, abs=1e-6)
    best = {CODE_INDEX[c] for c in [(1, 2, 3), (1, 2, 4), (1, 3, 4), (1, 4, 3)]}
    assert set(np.flatnonzero(np.isclose(value[52:76], 1.0))) == best


def test_hint_history_is_all_zeros_without_a_guess_to_make(vectors):
    feature = HintHistory(vectors)
    feature.reset("interceptor")
    value = feature(None, [], {"decision": None, "hint_history": [[], [], [], []]})
    assert value.shape == (100,) and not value.any()


def test_features_are_built_by_name_or_taken_as_objects(vectors):
    given = HintHistory(vectors)
    built = features.build(["counterpart", given])
    assert [f.name for f in built] == ["counterpart", "hint_history"] and built[1] is given
    assert set(FEATURES) == {"counterpart", "hint_history"}
    with pytest.raises(ValueError, match="unknown feature 'hint_history'; allowed: counterpart"):
        features.build(["hint_history"])
