"""Word-embedding baselines for Decrypto, after the Decrypto benchmark paper's GloVe/word2vec agents.

=====================  ======================================================================
kind                   seat and rule
=====================  ======================================================================
``glove_encoder``      encoder: per digit, a shuffled top-``k`` neighbour of the keyword that is
                       closer to it than to each of the other three keywords
``glove_decoder``      decoder: hints x keywords cosine matrix, best assignment
``glove_interceptor``  interceptor: hints x (mean vector of each keyword's past hints), best
                       assignment
=====================  ======================================================================

Arguments (every kind takes all four, so one seat table can serve a whole team)
    ``k`` (int, 16): the encoder's base candidate-pool size.
    ``greedy`` (bool, False): assign hints to keywords greedily, hint by hint, instead of by the
    Hungarian algorithm (decoder and interceptor; the encoder's model of an interceptor too).
    ``vectors`` (str, ``"glove-6b-50d"``): the word vectors, see :mod:`.vectors`.
    ``hint_vocabulary`` (path or None): the words the encoder may hint and the interceptor
    answers side questions with; default ``envs/decrypto/data/hint_vocabulary.txt``.

Encoder, for each digit ``d`` of the code in order, with target ``t`` = keyword ``d``:

1. take the ``k_d`` hint-vocabulary words most cosine-similar to ``t``, where ``k_d`` = ``k`` +
   the number of hints already given for keyword ``d`` (the pool grows by 1 per hint);
2. drop the four keywords (case-insensitive; the reference drops only ``t``, but our env forbids
   every team keyword), the hints already given for ``d``, and any word longer than the hint
   limits of the env's ``rules`` message (read from the inbox; an encoder whose inbox brought
   none before its first decision raises ``ValueError``);
3. shuffle with the agent's own generator (``numpy.random.default_rng(seed)`` at reset, so each
   episode's hints depend on its seed alone; the reference's one ``RandomState(0)`` ran on
   across the episodes of a matchup);
4. give the first candidate ``c`` with ``cos(c, t) > max over the other keywords of cos(c, o)``.

Fallbacks when no candidate qualifies (counted as ``hint_fallbacks``): a uniformly drawn word of
the base top-``k`` pool minus the keywords and used hints; if that is empty, any vocabulary word
that is not a keyword (and, while there is one, not a used hint).

Decoder and interceptor: a 3 x 4 matrix ``S[i, j]`` of cosine similarities of hint ``i`` with
keyword ``j`` (decoder) or with the mean of the raw vectors of keyword ``j``'s past hints
(interceptor; ``S[i, j] = 0`` where keyword ``j`` has no history). The guess maximises the total
similarity (:func:`~socialsim.agents.embedding.assignment.max_assignment`, the reference's
SciPy ``linear_sum_assignment`` with its tie rules) or, greedily, gives each hint in order the
most similar digit left, ties going to the higher digit. On turn 1 the interceptor's matrix is all
zeros: the Hungarian interceptor guesses 1-2-3 and the greedy one 4-3-2, as in the reference.

Out-of-vocabulary hints and keywords get the all-ones vector (the reference's rule).

Side questions (deterministic, from the question's context only)
    encoder ``predict_interceptor_guess``: the guess this module's interceptor (with the
    encoder's ``greedy``) would make from the hint history and the current hints.
    interceptor ``keywords_now``: for each keyword slot, the hint-vocabulary word nearest to the
    mean of the slot's past hints, those hints themselves excepted (``"unknown"`` with no history).
    ``keywords_before_reveal`` and ``keywords_other_interceptor`` give the same words: the agent
    remembers its belief exactly and models another interceptor as itself;
    ``keywords_told_interceptor`` gives them too, but the told numbers' keywords where it was told.

Actions: the encoder returns ``{"hints": [h1, h2, h3]}``; the others ``{"guess": [d1, d2, d3]}``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from socialsim.agents.embedding.assignment import max_assignment
from socialsim.agents.embedding.vectors import (
    HintVocabulary,
    WordVectors,
    load_hint_vocabulary,
    load_vectors,
)
from socialsim.envs.decrypto.protocol import (
    GUESS,
    HINTS,
    KEYWORD_QUESTIONS,
    KEYWORDS_TOLD_INTERCEPTOR,
    PREDICT_INTERCEPTOR_GUESS,
    UNKNOWN,
    Rules,
)

from socialsim.agent import Agent, Question
from socialsim.bus import Message

# -- the rules, as pure functions -----------------------------------------------------------------


def assign(similarity: np.ndarray, greedy: bool = False) -> list[int]:
    """The code (digits 1-4) that gives hint ``i`` digit ``guess[i]``, from a 3 x 4 matrix."""
    similarity = np.asarray(similarity, dtype=np.float64)
    if greedy:
        taken: set[int] = set()
        guess = []
        for row in similarity:
            # A stable ascending sort read backwards: among equal scores the higher digit wins.
            for column in np.argsort(row, kind="stable")[::-1]:
                if int(column) not in taken:
                    taken.add(int(column))
                    guess.append(int(column) + 1)
                    break
        return guess
    return [column + 1 for column in max_assignment(similarity.tolist())]


def history_means(vectors: WordVectors, hint_history: Sequence[Sequence[str]]) -> np.ndarray:
    """4 x dim: the mean raw vector of each keyword's past hints, zeros where there is none."""
    means = np.zeros((len(hint_history), vectors.dim), dtype=np.float32)
    for slot, hints in enumerate(hint_history):
        if len(hints):
            means[slot] = vectors.raw(hints).mean(axis=0)
    return means


def cosine_to(unit_rows: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Cosine of unit-length rows with each target vector; 0 for a zero target."""
    norms = np.linalg.norm(targets, axis=1)
    safe = np.where(norms > 0, norms, 1.0)
    return (unit_rows @ targets.T) / safe


def interceptor_guess(
    vectors: WordVectors, hints: Sequence[str], hint_history: Sequence[Sequence[str]], greedy: bool
) -> list[int]:
    """The embedding interceptor's guess: hints against the mean of each keyword's past hints."""
    return assign(
        cosine_to(vectors.unit_vectors(hints), history_means(vectors, hint_history)), greedy
    )


def decoder_guess(
    vectors: WordVectors, hints: Sequence[str], keywords: Sequence[str], greedy: bool
) -> list[int]:
    """The embedding decoder's guess: hints against the keywords."""
    return assign(vectors.unit_vectors(hints) @ vectors.unit_vectors(keywords).T, greedy)


def believed_keywords(
    vectors: WordVectors, vocabulary: HintVocabulary, hint_history: Sequence[Sequence[str]]
) -> list[str]:
    """Per keyword slot, the vocabulary word nearest to the mean of its past hints."""
    means = history_means(vectors, hint_history)
    scores = cosine_to(vocabulary.unit, means)  # vocabulary x slots
    words = []
    for slot, hints in enumerate(hint_history):
        if not len(hints):
            words.append(UNKNOWN)
            continue
        column = scores[:, slot].copy()
        for hint in hints:  # a keyword is never its own hint
            column[vocabulary.rows_of(hint)] = -np.inf
        words.append(vocabulary.words[int(np.argmax(column))])
    return words


# -- the agents -----------------------------------------------------------------------------------


class EmbeddingAgent(Agent):
    """Shared construction: parameters, vectors and hint vocabulary (see the module docstring)."""

    decision = ""

    def __init__(
        self,
        k: int = 16,
        greedy: bool = False,
        vectors: str | os.PathLike = "glove-6b-50d",
        hint_vocabulary: str | os.PathLike | None = None,
    ):
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"k: must be an integer >= 1, got {k!r}")
        if not isinstance(greedy, (bool, np.bool_)):
            raise ValueError(f"greedy: must be true or false, got {greedy!r}")
        self.k = int(k)
        self.greedy = bool(greedy)
        self.vectors = load_vectors(vectors)
        self.hint_vocabulary_path = hint_vocabulary
        self._vocabulary: HintVocabulary | None = None

    @property
    def vocabulary(self) -> HintVocabulary:
        if self._vocabulary is None:  # loaded on first use: the decoder never needs it
            self._vocabulary = load_hint_vocabulary(self.vectors, self.hint_vocabulary_path)
        return self._vocabulary

    def reset(self, agent_id: str, seat: str, seed: int) -> None:
        super().reset(agent_id, seat, seed)
        self.rng = np.random.default_rng(seed)

    def _check_decision(self, info: Mapping[str, Any]) -> None:
        if info.get("decision") != self.decision:
            raise ValueError(
                f"{self.kind or type(self).__name__}: asked for decision {info.get('decision')!r}; "
                f"this agent makes only {self.decision!r}"
            )


class GloveEncoder(EmbeddingAgent):
    """The embedding encoder (see the module docstring)."""

    decision = HINTS
    plays = {"decrypto": {HINTS}}

    def reset(self, agent_id: str, seat: str, seed: int) -> None:
        super().reset(agent_id, seat, seed)
        self._keywords: tuple[str, ...] = ()
        self.rules: Rules | None = None
        self.counters["hint_fallbacks"] = 0  # present in every record, zero or not

    def _prepare(self, keywords: Sequence[str], rules: Rules) -> None:
        """Once per episode: similarity of every vocabulary word to each keyword."""
        keywords = tuple(keywords)
        if keywords == self._keywords:
            return
        vocabulary = self.vocabulary
        self._keywords = keywords
        # V x 4. einsum, not @: a BLAS call this small gains nothing from the threads it wakes.
        self._similarity = np.einsum(
            "vd,kd->vk", vocabulary.unit, self.vectors.unit_vectors(keywords)
        )
        # Words the game's hint limits would reject are never candidates.
        limits = (rules.max_hint_words, rules.max_hint_chars)
        self._forbidden = vocabulary.too_long(*limits).copy()
        for keyword in keywords:
            self._forbidden[vocabulary.rows_of(keyword)] = True
        self._ranked: dict[int, np.ndarray] = {}

    def _top(self, slot: int, size: int) -> np.ndarray:
        """Rows of the ``size`` words most similar to keyword ``slot``, best first.

        Pools only grow by one per hint, so one partial sort per keyword and episode, a little
        longer than needed, serves every turn (it is redone longer if a pool outgrows it).
        """
        ranked = self._ranked.get(slot)
        if ranked is None or (len(ranked) < size and len(ranked) < len(self._similarity)):
            scores = self._similarity[:, slot]
            length = min(max(2 * size, size + 32), len(scores))
            if length < len(scores):
                rows = np.argpartition(-scores, length - 1)[:length]
            else:
                rows = np.arange(len(scores))
            # Ties in vocabulary order, so that pools do not depend on the partition's order.
            ranked = rows[np.lexsort((rows, -scores[rows]))]
            self._ranked[slot] = ranked
        return ranked[:size]

    def hint_for(self, digit: int, past_hints: Sequence[str]) -> str:
        """The hint for ``digit`` given the hints already used for its keyword."""
        slot = digit - 1
        words = self.vocabulary.words
        used = set(past_hints)

        pool = self._top(slot, self.k + len(past_hints))
        pool = np.array(
            [r for r in pool.tolist() if not self._forbidden[r] and words[r] not in used],
            dtype=np.int64,
        )
        shuffled = self.rng.permutation(pool)
        if len(shuffled):
            scores = self._similarity[shuffled]
            others = np.delete(scores, slot, axis=1).max(axis=1)
            closer = scores[:, slot] > others
            if closer.any():
                return words[int(shuffled[int(np.argmax(closer))])]

        self.count("hint_fallbacks")
        blocked = self._forbidden.copy()
        for hint in used:
            blocked[[r for r in self.vocabulary.rows_of(hint) if words[r] == hint]] = True
        base = self._top(slot, self.k)
        for candidates in (
            base[~blocked[base]],
            np.flatnonzero(~blocked),
            np.flatnonzero(~self._forbidden),
        ):
            if len(candidates):
                return words[int(self.rng.choice(candidates))]
        raise ValueError(
            f"hint_vocabulary: {self.vocabulary.name!r} holds only the keywords {list(self._keywords)}"
        )

    def act(
        self, observation: Any, messages: Sequence[Message], info: Mapping[str, Any]
    ) -> dict[str, list[str]]:
        self._check_decision(info)
        self.rules = Rules.from_messages(messages) or self.rules
        if self.rules is None:
            raise ValueError(
                f"{self.agent_id}: no 'rules' message reached this agent before its first "
                "decision; the hint limits come from it"
            )
        self._prepare(info["keywords"], self.rules)
        history = info["hint_history"]
        return {"hints": [self.hint_for(int(d), history[int(d) - 1]) for d in info["code"]]}

    def answer(self, question: Question) -> Any:
        if question.kind == PREDICT_INTERCEPTOR_GUESS:
            context = question.context
            return interceptor_guess(
                self.vectors, context["hints"], context["hint_history"], self.greedy
            )
        return super().answer(question)


class GloveDecoder(EmbeddingAgent):
    """The embedding decoder (see the module docstring)."""

    decision = GUESS
    plays = {"decrypto": {GUESS}}
    only_seats = ("decoder",)  # it reads the keywords, which the interceptor is never shown

    def act(
        self, observation: Any, messages: Sequence[Message], info: Mapping[str, Any]
    ) -> dict[str, list[int]]:
        self._check_decision(info)
        return {"guess": decoder_guess(self.vectors, info["hints"], info["keywords"], self.greedy)}


class GloveInterceptor(EmbeddingAgent):
    """The embedding interceptor (see the module docstring)."""

    decision = GUESS
    plays = {"decrypto": {GUESS}}

    def act(
        self, observation: Any, messages: Sequence[Message], info: Mapping[str, Any]
    ) -> dict[str, list[int]]:
        self._check_decision(info)
        return {
            "guess": interceptor_guess(
                self.vectors, info["hints"], info["hint_history"], self.greedy
            )
        }

    def answer(self, question: Question) -> Any:
        if question.kind in (*KEYWORD_QUESTIONS, KEYWORDS_TOLD_INTERCEPTOR):
            words = believed_keywords(
                self.vectors, self.vocabulary, question.context["hint_history"]
            )
            if question.kind == KEYWORDS_TOLD_INTERCEPTOR:  # told numbers: their keywords
                for number in question.context["told"]:
                    words[number - 1] = question.context["keywords"][number - 1]
            return words
        return super().answer(question)
