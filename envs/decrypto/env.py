"""Decrypto's PettingZoo adapter: spaces, masks, observations, rendering and the bus messages.

The rules are :mod:`socialsim.envs.decrypto.core`, the vocabulary
:mod:`socialsim.envs.decrypto.protocol`; the documentation page (spaces, observation layout,
actions, rewards) is the docstring of :mod:`socialsim.envs.decrypto_v0`. :class:`DecryptoEnv`
is the Parallel env, a :class:`~socialsim.envs.aec.DecisionEnv`, so its one AEC form is
:class:`~socialsim.envs.aec.DecisionAEC`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from socialsim.envs.aec import DecisionEnv
from socialsim.envs.decrypto import protocol
from socialsim.envs.decrypto.core import DecryptoGame
from socialsim.envs.decrypto.protocol import (
    CODE_INDEX,
    CODES,
    GUESS,
    GUESSERS,
    HINTS,
    SEATS,
    TEAMS,
    TOKENS_TO_LOSE,
    Options,
    Rules,
)
from socialsim.envs.decrypto.words import hint_vocabulary as load_hint_vocabulary
from socialsim.envs.decrypto.words import keyword_list

from socialsim.bus import ENV, EVERYONE, MessageBus, team

RENDER_MODES = ("ansi", "human")
_DECISION_CODE = {None: 0, HINTS: 1, GUESS: 2}


class DecryptoEnv(DecisionEnv):
    """Decrypto, Parallel form (see :mod:`socialsim.envs.decrypto_v0` for the whole page)."""

    metadata = {
        "name": "decrypto_v0",
        "render_modes": list(RENDER_MODES),
        "is_parallelizable": True,
    }

    def __init__(
        self,
        max_turns: int = protocol.MAX_TURNS,
        wordlist: str | os.PathLike | None = None,
        first_round_interception: bool = True,
        max_hint_words: int = protocol.MAX_HINT_WORDS,
        max_hint_chars: int = protocol.MAX_HINT_CHARS,
        hint_vocabulary: str | os.PathLike | None = None,
        render_mode: str | None = None,
        keywords: Sequence[str] | None = None,
        codes: Sequence[Any] | None = None,
    ):
        self.settings = Options(max_turns, first_round_interception, max_hint_words, max_hint_chars)
        # a given game (replays): every reset plays these keywords and codes instead of the seed's
        self.given = {
            "keywords": None if keywords is None else protocol.given_keywords(keywords),
            "codes": None if codes is None else protocol.given_codes(codes, max_turns),
        }
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(
                f"render_mode: must be one of {', '.join(RENDER_MODES)} or None, got {render_mode!r}"
            )
        self.render_mode = render_mode
        self.words = keyword_list(wordlist)
        self.max_turns = max_turns
        self.hint_vocabulary = load_hint_vocabulary(hint_vocabulary)
        self._vocab_index = {w.casefold(): i for i, w in enumerate(self.hint_vocabulary)}
        self._word_index = {w: i for i, w in enumerate(self.words)}
        # the vocabulary words the hint limits allow; the keywords are taken out at each reset
        self._hint_fits = np.array(
            [
                len(w.split()) <= max_hint_words and len(w) <= max_hint_chars
                for w in self.hint_vocabulary
            ],
            dtype=np.int8,
        )
        self._hint_mask = self._hint_fits
        self.possible_agents = list(SEATS)
        self.agents: list[str] = []
        self.bus = MessageBus(SEATS, TEAMS)
        self.game: DecryptoGame | None = None
        self.phase: str | None = None  # "hints" | "guess" | None (over)
        self.hints: list[str] | None = None  # the current turn's hints, once given
        self._seed_source: np.random.Generator | None = None

        V, T = len(self.hint_vocabulary), max_turns
        high = np.concatenate(
            [
                [T, 2, TOKENS_TO_LOSE, TOKENS_TO_LOSE],
                [len(self.words)] * 4,
                [4] * 3,
                [V + 1] * (3 + 4 * T),
                [4] * (3 * T),
                [len(CODES)] * (2 * T),
            ]
        ).astype(np.int64)
        vector = spaces.Box(low=np.zeros_like(high), high=high, dtype=np.int64)
        guess_mask = spaces.Box(0, 1, shape=(len(CODES),), dtype=np.int8)
        # one mask per hint position: MultiDiscrete.sample takes a tuple of per-position masks
        hint_mask = spaces.Tuple([spaces.Box(0, 1, shape=(V,), dtype=np.int8)] * 3)
        self._observation_spaces = {
            "encoder": spaces.Dict({"observation": vector, "action_mask": hint_mask}),
            "decoder": spaces.Dict({"observation": vector, "action_mask": guess_mask}),
            "interceptor": spaces.Dict({"observation": vector, "action_mask": guess_mask}),
        }
        self._action_spaces = {
            "encoder": spaces.MultiDiscrete([V, V, V]),
            "decoder": spaces.Discrete(len(CODES)),
            "interceptor": spaces.Discrete(len(CODES)),
        }
        #: the global state of :meth:`state`: the observation vector with nothing hidden
        self.state_space = vector

    # -- PettingZoo API -----------------------------------------------------------------------

    def observation_space(self, agent: str):
        return self._observation_spaces[agent]

    def action_space(self, agent: str):
        return self._action_spaces[agent]

    @property
    def turn(self) -> int:
        return 0 if self.game is None else self.game.turn

    def rules(self) -> Rules:
        """The payload of the ``rules`` message: the settings in force, nothing secret."""
        return Rules.of(self.settings)

    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None):
        if seed is not None:
            self._seed_source = np.random.default_rng(seed)
        elif self._seed_source is None:
            self._seed_source = np.random.default_rng()
        if seed is None:
            # an unseeded reset continues from the last seed given, as Gymnasium envs do
            seed = int(self._seed_source.integers(2**31 - 1))
        given = {**self.given, **(options or {})}
        settings = self.settings
        self.game = game = DecryptoGame(
            self.words,
            seed,
            keywords=given["keywords"],
            codes=given["codes"],
            max_turns=settings.max_turns,
            first_round_interception=settings.first_round_interception,
            max_hint_words=settings.max_hint_words,
            max_hint_chars=settings.max_hint_chars,
        )
        secret = [self._vocab_index.get(k.strip().casefold()) for k in game.keywords]
        self._hint_mask = self._hint_fits.copy()
        self._hint_mask[[i for i in secret if i is not None]] = 0  # a keyword is never a hint
        self.agents = list(SEATS)
        self.bus = MessageBus(SEATS, TEAMS)
        self.phase = HINTS
        self.hints = None
        self._publish("rules", EVERYONE, "public", self.rules())
        self._publish("keywords", team("encoders"), "team", protocol.Keywords(list(game.keywords)))
        self._publish_code()
        return self.observe_all(), self._infos()

    def close(self) -> None:
        pass

    # -- the DecisionEnv methods ----------------------------------------------------------------

    def deciding(self) -> list[str]:
        """The agents that have a decision now."""
        return [a for a in self.agents if self._decision(a)]

    def check_action(self, agent: str, action: Any) -> tuple[Any, dict[str, Any] | None]:
        if agent == "encoder":
            played, reasons = self.game.apply_hint_fallback(self.read_hints(action))
            flag = {"reason": "; ".join(reasons), "fallback": played} if reasons else None
            return played, flag
        return self.read_guess(agent, action), None

    def apply(
        self, choices: Mapping[str, Any], flags: Mapping[str, dict[str, Any]]
    ) -> tuple[dict[str, float], bool, bool, dict[str, dict[str, Any]]]:
        game = self.game
        assert game is not None
        rewards = dict.fromkeys(self.agents, 0)
        if self.phase == HINTS:
            self.hints = choices["encoder"]
            self.phase = GUESS
            self._publish("hints", EVERYONE, "public", protocol.Hints(self.turn, self.hints))
        else:
            turn = self.turn
            result = game.play_turn(self.hints, choices["decoder"], choices.get("interceptor"))
            reveal = protocol.Reveal(
                **result.to_json(),
                miscommunications=game.miscommunications,
                interceptions=game.interceptions,
            )
            self._publish("reveal", EVERYONE, "public", reveal, turn=turn)
            self.hints = None
            if game.done:
                self.phase = None
                rewards = game.rewards()
                over = protocol.GameOver(game.ending, len(game.turn_log))
                self._publish("game_over", EVERYONE, "public", over, turn=turn)
            else:
                self.phase = HINTS
                self._publish_code()
        return rewards, game.done, False, self._infos()

    def observe(self, agent: str) -> dict[str, Any]:
        return self._observation(agent, self._public_vector())

    def observe_all(self) -> dict[str, dict[str, Any]]:
        public = self._public_vector()
        return {agent: self._observation(agent, public) for agent in self.agents}

    # -- reading actions ------------------------------------------------------------------------

    def read_hints(self, action: Any) -> list[str]:
        """The encoder's three hints from its action; ``ValueError`` if it is malformed."""
        V = len(self.hint_vocabulary)
        expected = f"{{'hints': [str, str, str]}} or an element of MultiDiscrete([{V}, {V}, {V}]) (hint-vocabulary indices)"
        if isinstance(action, Mapping):
            hints = action.get("hints")
            if (
                isinstance(hints, (list, tuple))
                and len(hints) == 3
                and all(isinstance(h, str) for h in hints)
            ):
                return list(hints)
            raise ValueError(f"encoder: expected {expected}, got {action!r}")
        if isinstance(action, (list, tuple, np.ndarray)) and np.shape(action) == (3,):
            values = list(action)
            if all(
                isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
                for v in values
            ):
                if all(0 <= int(v) < V for v in values):
                    return [self.hint_vocabulary[int(v)] for v in values]
        raise ValueError(f"encoder: expected {expected}, got {action!r}")

    def read_guess(self, agent: str, action: Any) -> tuple[int, int, int]:
        """A guesser's code from its action; ``ValueError`` if it is not a code."""
        expected = "an action in Discrete(24) or {'guess': [d1, d2, d3] | 'X-Y-Z'} with distinct digits 1-4"
        value = action.get("guess") if isinstance(action, Mapping) else action
        if not isinstance(action, Mapping) and not isinstance(action, (int, np.integer)):
            raise ValueError(f"{agent}: expected {expected}, got {action!r}")
        try:
            return protocol.parse_code(value)
        except ValueError as error:
            raise ValueError(f"{agent}: expected {expected}, got {action!r} ({error})") from None

    # -- what agents see --------------------------------------------------------------------------

    def _decision(self, agent: str) -> str | None:
        game = self.game
        if game is None or game.done:
            return None
        if self.phase == HINTS:
            return HINTS if agent == "encoder" else None
        if agent == "decoder" or (agent == "interceptor" and game.interceptor_guesses):
            return GUESS
        return None

    def _publish(self, kind: str, to: Any, channel: str, payload: Any, turn: int | None = None):
        self.bus.publish(
            turn=self.turn if turn is None else turn,
            sender=ENV,
            to=to,
            channel=channel,
            kind=kind,
            payload=payload.to_payload(),
        )

    def _publish_code(self) -> None:
        assert self.game is not None and self.game.code is not None
        self._publish(
            "code", ["encoder"], "private", protocol.Code(self.turn, list(self.game.code))
        )

    def _infos(self) -> dict[str, dict[str, Any]]:
        game = self.game
        assert game is not None
        infos = {}
        for agent in self.agents:
            decision = self._decision(agent)
            info: dict[str, Any] = {
                "decision": decision,
                "turn": game.turn,
                "miscommunications": game.miscommunications,
                "interceptions": game.interceptions,
                "hint_history": [list(h) for h in game.hint_history],
                "code_history": [list(c) for c in game.code_history],
                "last_turn": game.turn_log[-1].to_json() if game.turn_log else None,
            }
            if agent != "interceptor":
                info["keywords"] = list(game.keywords)
            if agent == "encoder" and decision == HINTS:
                info["code"] = list(game.code)
            if agent != "encoder" and decision == GUESS:
                info["hints"] = list(self.hints)
            infos[agent] = info
        return infos

    def _hint_index(self, hint: str | None) -> int:
        V = len(self.hint_vocabulary)
        if hint is None:
            return V + 1
        return self._vocab_index.get(hint.casefold(), V)

    def _public_vector(self) -> list[int]:
        """Everything of the observation vector after the code digits: what everyone sees."""
        game = self.game
        assert game is not None
        T = self.max_turns
        none = self._hint_index(None)
        current = [self._hint_index(h) for h in self.hints] if self.hints else [none] * 3
        history = []
        for hints in game.hint_history:
            history += [self._hint_index(h) for h in hints] + [none] * (T - len(hints))
        codes, guesses = [], []
        for result in game.turn_log:
            codes += list(result.code)
            guesses += [
                CODE_INDEX[result.decoder_guess],
                len(CODES)
                if result.interceptor_guess is None
                else CODE_INDEX[result.interceptor_guess],
            ]
        codes += [0] * (3 * T - len(codes))
        guesses += [len(CODES)] * (2 * T - len(guesses))
        return current + history + codes + guesses

    def _vector(self, decision_code: int, keywords: bool, code: bool, public: list[int]):
        game = self.game
        assert game is not None
        shown = [self._word_index.get(k, len(self.words)) for k in game.keywords]
        return np.array(
            [game.turn, decision_code, game.miscommunications, game.interceptions]
            + (shown if keywords else [len(self.words)] * 4)
            + (list(game.code) if code and game.code is not None else [0, 0, 0])
            + public,
            dtype=np.int64,
        )

    def _observation(self, agent: str, public: list[int]) -> dict[str, Any]:
        decision = self._decision(agent)
        vector = self._vector(
            _DECISION_CODE[decision],
            keywords=agent != "interceptor",
            code=agent == "encoder" and decision == HINTS,
            public=public,
        )
        if agent == "encoder":
            allowed = self._hint_mask if decision else np.zeros_like(self._hint_mask)
            mask: Any = (allowed.copy(), allowed.copy(), allowed.copy())
        else:
            mask = np.full(len(CODES), 1 if decision else 0, dtype=np.int8)
        return {"observation": vector, "action_mask": mask}

    # -- global views -------------------------------------------------------------------------

    def state(self) -> np.ndarray:
        """The global state, for centralised critics: the observation vector's layout with
        nothing hidden (the keywords, the current code while one is in play) and index 1 the
        phase (0 over, 1 hints, 2 guess)."""
        if self.game is None:
            raise ValueError("state: no game yet; call reset() first")
        return self._vector(
            _DECISION_CODE[self.phase], keywords=True, code=True, public=self._public_vector()
        )

    def render(self) -> str | None:
        """The public state in a few lines (never a keyword or an unrevealed code)."""
        if self.render_mode is None:
            return None
        text = render_text(self)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def summary(self) -> dict[str, Any]:
        """Keywords, ending, turns, counters and the turn log (see ``core.DecryptoGame.summary``)."""
        if self.game is None:
            raise ValueError("summary: no game yet; call reset() first")
        return self.game.summary()


def render_text(env: DecryptoEnv) -> str:
    """What ``render()`` shows: turn and phase, the tokens, this turn's hints once given and the
    public hint history by keyword position."""
    game = env.game
    if game is None:
        return "Decrypto: no game yet (call reset())"
    if game.done:
        head = f"Decrypto, game over after turn {game.turn} of {game.max_turns}: {game.ending}"
    else:
        doing = "the encoder hints" if env.phase == HINTS else "the guessers guess"
        head = f"Decrypto, turn {game.turn} of {game.max_turns}: {doing}"
    lines = [
        head,
        f"tokens: miscommunications {game.miscommunications}/{TOKENS_TO_LOSE}, "
        f"interceptions {game.interceptions}/{TOKENS_TO_LOSE}",
    ]
    if env.hints:
        lines.append("hints this turn: " + ", ".join(env.hints))
    lines.append("hint history by keyword:")
    for position, hints in enumerate(game.hint_history, 1):
        lines.append(f"  {position}: " + (", ".join(hints) if hints else "-"))
    return "\n".join(lines)


__all__ = ["GUESSERS", "RENDER_MODES", "TEAMS", "DecryptoEnv", "render_text"]
