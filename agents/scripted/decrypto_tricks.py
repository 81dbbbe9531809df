"""Decrypto players that answer the theory-of-mind side questions by a rule that holds no
beliefs: the tricks every ToM score is shown beside (:mod:`socialsim.analysis.decrypto_tricks`
scores the same rules on any run's turns). They play the game as the random players of
:mod:`socialsim.agents.scripted.decrypto` (random hints, random guesses); only their answers
differ.

Interceptors (the Gopnik probe's keyword questions; "keywords now" is N):

======================================  ==========================================================
kind                                    answers
======================================  ==========================================================
``decrypto_constant_interceptor``       ``words`` (four words, default alpha, bravo, charlie,
                                        delta) to every question; ``per_question = true``: a
                                        different fixed list for each question
``decrypto_repeat_interceptor``         four random vocabulary words drawn at its first question
                                        of the episode, repeated to every question after
``decrypto_realist_interceptor``        N = random words; the revealed keywords wherever the
                                        question shows them
``decrypto_random_word_interceptor``    four random vocabulary words to every question
``decrypto_oracle_interceptor``         N = random words drawn per turn (from the turn and its own
                                        seed, so every question of a turn sees the same), N to the
                                        recall and other-interceptor questions, and the told
                                        numbers' keywords with N elsewhere to the told one
======================================  ==========================================================

The abstainer is ``decrypto_random_guesser`` (it answers ``"unknown"``).

Encoders (the Piaget probe's ``predict_interceptor_guess``):

====================================  ============================================================
kind                                  prediction
====================================  ============================================================
``decrypto_code_predictor``           the true code (it always predicts an interception)
``decrypto_last_guess_predictor``     the interceptor's guess of the previous turn (``"unknown"``
                                      before there is one)
``decrypto_constant_predictor``       ``code`` (default 1-2-3) every turn
``decrypto_abstaining_encoder``       ``"unknown"``
====================================  ============================================================

The random answerer is ``decrypto_random_encoder`` (a uniformly random code). Every draw comes
from the agent's answer stream (seeded at reset), so answering never changes its moves.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from socialsim.agents.scripted.decrypto import RandomEncoder, RandomGuesser
from socialsim.envs.decrypto.protocol import (
    CONSTANT_KEYWORD_LISTS,
    KEYWORD_QUESTIONS,
    KEYWORDS_TOLD_INTERCEPTOR,
    PREDICT_INTERCEPTOR_GUESS,
    UNKNOWN,
    parse_code,
)
from socialsim.envs.decrypto.words import hint_vocabulary

from socialsim.agent import Question
from socialsim.bus import Message

_MODULE = "socialsim.agents.scripted.decrypto_tricks"
KINDS = {
    "decrypto_constant_interceptor": f"{_MODULE}:ConstantInterceptor",
    "decrypto_repeat_interceptor": f"{_MODULE}:RepeatInterceptor",
    "decrypto_realist_interceptor": f"{_MODULE}:RealistInterceptor",
    "decrypto_random_word_interceptor": f"{_MODULE}:RandomWordInterceptor",
    "decrypto_oracle_interceptor": f"{_MODULE}:OracleInterceptor",
    "decrypto_code_predictor": f"{_MODULE}:CodePredictor",
    "decrypto_last_guess_predictor": f"{_MODULE}:LastGuessPredictor",
    "decrypto_constant_predictor": f"{_MODULE}:ConstantPredictor",
    "decrypto_abstaining_encoder": f"{_MODULE}:AbstainingEncoder",
}
QUESTIONS = (*KEYWORD_QUESTIONS, KEYWORDS_TOLD_INTERCEPTOR)
CONSTANT_LISTS = CONSTANT_KEYWORD_LISTS


# -- interceptors ---------------------------------------------------------------------------------


class _TrickInterceptor(RandomGuesser):
    """A random guesser whose keyword answers come from :meth:`keywords`."""

    def answer(self, question: Question) -> Any:
        if question.kind in QUESTIONS:
            return list(self.keywords(question.kind, question.context))
        return super().answer(question)

    def keywords(self, kind: str, context: Mapping[str, Any]) -> Sequence[str]:
        raise NotImplementedError


class ConstantInterceptor(_TrickInterceptor):
    """``words`` to every keyword question, or with ``per_question`` one fixed list each."""

    def __init__(self, words: Sequence[str] | None = None, per_question: bool = False):
        if words is not None and (
            isinstance(words, str)
            or len(words) != 4
            or not all(isinstance(w, str) and w.strip() for w in words)
        ):
            raise ValueError(f"words: must be a list of four non-empty words, got {words!r}")
        if not isinstance(per_question, bool):
            raise ValueError(f"per_question: must be true or false, got {per_question!r}")
        self.words = tuple(words) if words is not None else CONSTANT_LISTS[0]
        self.per_question = per_question

    def keywords(self, kind: str, context: Mapping[str, Any]) -> Sequence[str]:
        return CONSTANT_LISTS[QUESTIONS.index(kind)] if self.per_question else self.words


class _Vocabulary(_TrickInterceptor):
    def __init__(self, vocabulary: str | os.PathLike | None = None):
        self.vocabulary = hint_vocabulary(vocabulary)

    def draw(self, rng: np.random.Generator) -> list[str]:
        return [self.vocabulary[int(i)] for i in rng.integers(len(self.vocabulary), size=4)]


class RandomWordInterceptor(_Vocabulary):
    """Four random vocabulary words to every keyword question."""

    def keywords(self, kind: str, context: Mapping[str, Any]) -> Sequence[str]:
        return self.draw(self.answer_rng)


class RepeatInterceptor(_Vocabulary):
    """Its first answer of the episode (four random words), repeated to every question."""

    def reset(self, agent_id: str, seat: str, seed: int) -> None:
        super().reset(agent_id, seat, seed)
        self.first: list[str] | None = None

    def keywords(self, kind: str, context: Mapping[str, Any]) -> Sequence[str]:
        if self.first is None:
            self.first = self.draw(self.answer_rng)
        return self.first


class _Believer(_Vocabulary):
    """A belief per turn: four random words from the turn and the agent's seed alone."""

    def reset(self, agent_id: str, seat: str, seed: int) -> None:
        super().reset(agent_id, seat, seed)
        self.seed = seed

    def belief(self, context: Mapping[str, Any]) -> list[str]:
        return self.draw(np.random.default_rng([self.seed, int(context["turn"])]))


class RealistInterceptor(_Believer):
    """Its belief when the keywords are hidden; the revealed keywords when they are shown."""

    def keywords(self, kind: str, context: Mapping[str, Any]) -> Sequence[str]:
        return context["keywords"] if "keywords" in context else self.belief(context)


class OracleInterceptor(_Believer):
    """Its belief to every question, but the told numbers' keywords to the told question."""

    def keywords(self, kind: str, context: Mapping[str, Any]) -> Sequence[str]:
        words = self.belief(context)
        if kind == KEYWORDS_TOLD_INTERCEPTOR:
            for number in context["told"]:
                words[number - 1] = context["keywords"][number - 1]
        return words


# -- encoders -------------------------------------------------------------------------------------


class _TrickEncoder(RandomEncoder):
    """A random encoder whose prediction of the interceptor's guess comes from :meth:`predict`."""

    def answer(self, question: Question) -> Any:
        if question.kind == PREDICT_INTERCEPTOR_GUESS:
            return self.predict(question.context)
        return super().answer(question)

    def predict(self, context: Mapping[str, Any]) -> Any:
        raise NotImplementedError


class CodePredictor(_TrickEncoder):
    """Predicts the true code: an interception every turn."""

    def predict(self, context: Mapping[str, Any]) -> Any:
        return list(context["code"])


class LastGuessPredictor(_TrickEncoder):
    """Predicts the interceptor's previous guess, read from the last turn its info revealed."""

    def reset(self, agent_id: str, seat: str, seed: int) -> None:
        super().reset(agent_id, seat, seed)
        self.last_guess: list[int] | None = None

    def act(self, observation: Any, messages: Sequence[Message], info: Mapping[str, Any]):
        last = info.get("last_turn") or {}
        if last.get("interceptor_guess") is not None:
            self.last_guess = list(last["interceptor_guess"])
        return super().act(observation, messages, info)

    def predict(self, context: Mapping[str, Any]) -> Any:
        return self.last_guess if self.last_guess is not None else UNKNOWN


class ConstantPredictor(_TrickEncoder):
    """Predicts ``code`` (three distinct digits 1-4, default 1-2-3) every turn."""

    def __init__(self, code: Any = (1, 2, 3), vocabulary: str | os.PathLike | None = None):
        try:
            self.code = list(parse_code(code))
        except ValueError:
            raise ValueError(
                f"code: must be three distinct digits 1-4 (e.g. [1, 2, 3]), got {code!r}"
            ) from None
        super().__init__(vocabulary)

    def predict(self, context: Mapping[str, Any]) -> Any:
        return list(self.code)


class AbstainingEncoder(_TrickEncoder):
    """Answers ``"unknown"``: never a prediction."""

    def predict(self, context: Mapping[str, Any]) -> Any:
        return UNKNOWN
