"""Decrypto as a PettingZoo environment (the rules are in :mod:`socialsim.envs.decrypto.core`).

| | |
|---|---|
| Import | `from socialsim.envs import decrypto_v0` |
| Agents | `encoder`, `decoder`, `interceptor` (teams `encoders` = encoder + decoder, `interceptors`) |
| Form | Parallel (`decrypto_v0.parallel_env()`); AEC (`decrypto_v0.env()`, :class:`aec_env` over the Parallel env) |
| Encoder action | `MultiDiscrete([V, V, V])` over the hint vocabulary, or `{"hints": [str, str, str]}` |
| Guess action | `Discrete(24)`: index `i` is `CODES[i]` (0 is 1-2-3, 23 is 4-3-2), or `{"guess": [d1, d2, d3]}` / `{"guess": "X-Y-Z"}` |
| Observation | `{"observation": Box(int64, (14 + 9 * max_turns,)), "action_mask": (24,) int8}` (no mask for the encoder) |

Flow of a turn (Parallel form). Step A: only the encoder has a decision (``infos["encoder"]
["decision"] == "hints"``). Step B: the decoder and the interceptor both have the decision
``"guess"`` and act together, neither seeing the other's guess; then the reveal, and the next
turn's step A. Actions from agents without a decision are ignored. The AEC form selects only the
agents with a decision: encoder; decoder, interceptor; encoder... (``pettingzoo.utils.
parallel_to_aec`` would also work, but it applies an action only when the last agent of the
round steps, so the encoder's ``invalid_action`` flag would land on another agent's no-op step.)

Arguments
---------
* ``max_turns=8`` — the team wins by surviving this many turns (1-24).
* ``wordlist=None`` — path of another keyword list (one word per line; at least 4). The code
  sequence of a seed depends only on the list's length; the bundled list has 680 words, the
  reference's length, so the codes match the reference's, and pointing this at the reference's
  own file gives its keywords too.
* ``first_round_interception=True`` — the interceptor guesses, and can intercept, from turn 1,
  as in the reference implementation. ``False`` gives the board game's first-round rule: no
  interceptor guess on turn 1 (its decision is ``None`` there); that rule is off by default.
* ``max_hint_words=2``, ``max_hint_chars=32`` — the hint limits of :func:`core.validate_hints`.
* ``hint_vocabulary=None`` — path of the word list that indexes the encoder's ``MultiDiscrete``
  space; by default ``data/rl_hints.txt`` (328 common words, none of them a bundled keyword).
* ``reset(seed=..., options={"keywords": [w1, w2, w3, w4]})`` fixes the keywords (replays); the
  codes are still the seed's.

Observation
-----------
What agents read is in ``infos[agent]`` and on the bus (``env.unwrapped.bus``), as plain JSON:
``decision``, ``turn``, ``miscommunications``, ``interceptions``, ``hint_history`` (4 lists, by
keyword), ``code_history``, ``last_turn`` (code, hints, both guesses and the tokens of the last
reveal, or ``None``); ``keywords`` for the encoder and the decoder only; ``code`` for the encoder
only, at its ``"hints"`` decision; ``hints`` for the decoder and the interceptor at their
``"guess"`` decision. Bus messages: ``keywords`` (to ``team:encoders``, at reset), ``code`` (to
the encoder, each turn), ``hints`` (to everyone, after step A), ``reveal`` (to everyone, after
step B) and ``game_over`` (to everyone: ending and turns, never the keywords).

``observation`` is the same information as integers, for RL (``T = max_turns``, ``N`` words in
the keyword list, ``V`` words in the hint vocabulary):

| index | content | values |
|---|---|---|
| 0 | turn | 0..T |
| 1 | this agent's decision | 0 none, 1 hints, 2 guess |
| 2, 3 | miscommunications, interceptions | 0..2 |
| 4-7 | keywords as keyword-list indices | N = hidden (always, for the interceptor) |
| 8-10 | current code digits | 0 = hidden (all but the encoder at its decision) |
| 11-13 | current hints as vocabulary indices | V = a word outside the vocabulary, V+1 = none |
| 14 .. 14+4T | hint history, keyword k's slot s at 14 + k*T + s | as hints |
| next 3T | code history, turn t's digits | 0 = none |
| next 2T | decoder's and interceptor's guesses of turn t | code index, 24 = none |

Action
------
The guessers' ``action_mask`` is all ones: every code is a legal guess. A guess in any other
form, with a repeated digit or a digit outside 1-4 (``{"guess": "1-1-2"}``) is not a code and
is a ``ValueError``, as is any malformed action (wrong type, a number of hints other than 3, an
index outside the space): the error names the agent, the expected form and what it got, and
nothing changes. A well-formed hint that breaks a rule (empty, too many words or characters,
equal to a keyword ignoring case) is replaced by ``"no_hint"`` before anyone sees it, and
``infos["encoder"]["invalid_action"] = {"reason": ..., "fallback": [the hints played]}``.

Rewards
-------
0 until the game ends; then encoder -1, decoder -1, interceptor +1 if the interceptor won (two
interceptions or two miscommunications, ending ``intercept``, ``miscomm`` or ``both``), and
+1, +1, -1 if the team survived ``max_turns`` turns (``survived``).

Version History
---------------
* v0: first version; rules and seeds as the Decrypto benchmark's reference implementation.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils import wrappers
from socialsim.envs.decrypto import core
from socialsim.envs.decrypto.core import CODE_INDEX, CODES, SEATS, DecryptoGame
from socialsim.envs.decrypto.words import hint_vocabulary as load_hint_vocabulary
from socialsim.envs.decrypto.words import keyword_list

from socialsim.bus import ENV, EVERYONE, MessageBus, team

TEAMS = {"encoders": ("encoder", "decoder"), "interceptors": ("interceptor",)}
GUESSERS = ("decoder", "interceptor")
_DECISION_CODE = {None: 0, "hints": 1, "guess": 2}


class raw_env(ParallelEnv):  # noqa: N801 - PettingZoo naming
    metadata = {"name": "decrypto_v0", "render_modes": [], "is_parallelizable": True}

    def __init__(
        self,
        max_turns: int = core.MAX_TURNS,
        wordlist: str | os.PathLike | None = None,
        first_round_interception: bool = True,
        max_hint_words: int = core.MAX_HINT_WORDS,
        max_hint_chars: int = core.MAX_HINT_CHARS,
        hint_vocabulary: str | os.PathLike | None = None,
    ):
        self.words = keyword_list(wordlist)
        self.options = {
            "max_turns": max_turns,
            "first_round_interception": first_round_interception,
            "max_hint_words": max_hint_words,
            "max_hint_chars": max_hint_chars,
        }
        DecryptoGame(self.words, 0, **self.options)  # checks the options now, not at reset
        self.max_turns = max_turns
        self.hint_vocabulary = load_hint_vocabulary(hint_vocabulary)
        self._vocab_index = {w.casefold(): i for i, w in enumerate(self.hint_vocabulary)}
        self._word_index = {w: i for i, w in enumerate(self.words)}
        self.render_mode = None
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
                [T, 2, core.TOKENS_TO_LOSE, core.TOKENS_TO_LOSE],
                [len(self.words)] * 4,
                [4] * 3,
                [V + 1] * (3 + 4 * T),
                [4] * (3 * T),
                [len(CODES)] * (2 * T),
            ]
        ).astype(np.int64)
        vector = spaces.Box(low=np.zeros_like(high), high=high, dtype=np.int64)
        mask = spaces.Box(0, 1, shape=(len(CODES),), dtype=np.int8)
        self._observation_spaces = {
            "encoder": spaces.Dict({"observation": vector}),
            "decoder": spaces.Dict({"observation": vector, "action_mask": mask}),
            "interceptor": spaces.Dict({"observation": vector, "action_mask": mask}),
        }
        self._action_spaces = {
            "encoder": spaces.MultiDiscrete([V, V, V]),
            "decoder": spaces.Discrete(len(CODES)),
            "interceptor": spaces.Discrete(len(CODES)),
        }

    # -- PettingZoo API -----------------------------------------------------------------------

    def observation_space(self, agent: str):
        return self._observation_spaces[agent]

    def action_space(self, agent: str):
        return self._action_spaces[agent]

    @property
    def turn(self) -> int:
        return 0 if self.game is None else self.game.turn

    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None):
        if seed is not None:
            self._seed_source = np.random.default_rng(seed)
        elif self._seed_source is None:
            self._seed_source = np.random.default_rng()
        if seed is None:
            # an unseeded reset continues from the last seed given, as Gymnasium envs do
            seed = int(self._seed_source.integers(2**31 - 1))
        keywords = (options or {}).get("keywords")
        self.game = DecryptoGame(self.words, seed, keywords=keywords, **self.options)
        self.agents = list(SEATS)
        self.bus = MessageBus(SEATS, TEAMS)
        self.phase = "hints"
        self.hints = None
        self.bus.publish(
            turn=self.turn,
            sender=ENV,
            to=team("encoders"),
            channel="team",
            kind="keywords",
            payload={"keywords": list(self.game.keywords)},
        )
        self._publish_code()
        return self._observations(), self._infos()

    def step(self, actions: Mapping[str, Any]):
        game = self.game
        if game is None or not self.agents:
            raise ValueError("step: no game in progress; call reset() first")
        if not isinstance(actions, Mapping):
            raise ValueError(f"actions: expected a dict agent id -> action, got {actions!r}")
        acting = self.deciding()
        missing = [a for a in acting if a not in actions]
        if missing:
            raise ValueError(f"actions: no action for {missing}; they have a decision this step")
        flags: dict[str, dict[str, Any]] = {}
        rewards = {a: 0 for a in self.agents}
        if self.phase == "hints":
            given = self.read_hints(actions["encoder"])  # raises before anything changes
            played, reasons = game.apply_hint_fallback(given)
            if reasons:
                flags["encoder"] = {"reason": "; ".join(reasons), "fallback": played}
            self.hints = played
            self.phase = "guess"
            self.bus.publish(
                turn=self.turn,
                sender=ENV,
                to=EVERYONE,
                channel="public",
                kind="hints",
                payload={"turn": self.turn, "hints": played},
            )
        else:
            decoder = self.read_guess("decoder", actions["decoder"])
            interceptor = (
                self.read_guess("interceptor", actions["interceptor"])
                if "interceptor" in acting
                else None
            )
            turn = self.turn
            result = game.play_turn(self.hints, decoder, interceptor)
            self.bus.publish(
                turn=turn,
                sender=ENV,
                to=EVERYONE,
                channel="public",
                kind="reveal",
                payload={
                    **result.to_json(),
                    "miscommunications": game.miscommunications,
                    "interceptions": game.interceptions,
                },
            )
            self.hints = None
            if game.done:
                self.phase = None
                rewards = game.rewards()
                self.bus.publish(
                    turn=turn,
                    sender=ENV,
                    to=EVERYONE,
                    channel="public",
                    kind="game_over",
                    payload={"ending": game.ending, "turns": len(game.turn_log)},
                )
            else:
                self.phase = "hints"
                self._publish_code()
        observations = self._observations()
        infos = self._infos()
        for agent, flag in flags.items():
            infos[agent]["invalid_action"] = flag
        over = game.done
        terminations = {a: over for a in self.agents}
        truncations = {a: False for a in self.agents}
        if over:
            self.agents = []
        return observations, rewards, terminations, truncations, infos

    def close(self) -> None:
        pass

    # -- reading actions ------------------------------------------------------------------------

    def deciding(self) -> list[str]:
        """The agents that have a decision now."""
        return [a for a in self.agents if self._decision(a)]

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
            return core.parse_code(value)
        except ValueError as error:
            raise ValueError(f"{agent}: expected {expected}, got {action!r} ({error})") from None

    # -- what agents see --------------------------------------------------------------------------

    def _decision(self, agent: str) -> str | None:
        game = self.game
        if game is None or game.done:
            return None
        if self.phase == "hints":
            return "hints" if agent == "encoder" else None
        if agent == "decoder" or (agent == "interceptor" and game.interceptor_guesses):
            return "guess"
        return None

    def _publish_code(self) -> None:
        assert self.game is not None and self.game.code is not None
        self.bus.publish(
            turn=self.turn,
            sender=ENV,
            to=["encoder"],
            channel="private",
            kind="code",
            payload={"turn": self.turn, "code": list(self.game.code)},
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
            if agent == "encoder" and decision == "hints":
                info["code"] = list(game.code)
            if agent != "encoder" and decision == "guess":
                info["hints"] = list(self.hints)
            infos[agent] = info
        return infos

    def _hint_index(self, hint: str | None) -> int:
        V = len(self.hint_vocabulary)
        if hint is None:
            return V + 1
        return self._vocab_index.get(hint.casefold(), V)

    def _observations(self) -> dict[str, dict[str, np.ndarray]]:
        game = self.game
        assert game is not None
        T = self.max_turns
        hidden_keywords = [len(self.words)] * 4
        team_keywords = [self._word_index.get(k, len(self.words)) for k in game.keywords]
        history = []
        for hints in game.hint_history:
            history += [self._hint_index(h) for h in hints] + [self._hint_index(None)] * (
                T - len(hints)
            )
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
        current_hints = (
            [self._hint_index(h) for h in self.hints]
            if self.hints
            else [self._hint_index(None)] * 3
        )
        observations = {}
        for agent in self.agents:
            decision = self._decision(agent)
            code = list(game.code) if agent == "encoder" and decision == "hints" else [0, 0, 0]
            vector = np.array(
                [game.turn, _DECISION_CODE[decision], game.miscommunications, game.interceptions]
                + (hidden_keywords if agent == "interceptor" else team_keywords)
                + code
                + current_hints
                + history
                + codes
                + guesses,
                dtype=np.int64,
            )
            observation = {"observation": vector}
            if agent in GUESSERS:
                observation["action_mask"] = np.ones(len(CODES), dtype=np.int8)
            observations[agent] = observation
        return observations

    def summary(self) -> dict[str, Any]:
        """Keywords, ending, turns, counters and the turn log (see ``core.DecryptoGame.summary``)."""
        if self.game is None:
            raise ValueError("summary: no game yet; call reset() first")
        return self.game.summary()


class aec_env(AECEnv):  # noqa: N801 - PettingZoo naming
    """The AEC form, built on :class:`raw_env`: only the agents with a decision are selected.

    Step A selects the encoder; step B the decoder, then the interceptor (whose guess the decoder
    cannot see: both reach the game together when the interceptor has acted). An action is
    checked when its agent steps, so a ``ValueError`` names that agent and changes nothing; an
    ``invalid_action`` flag appears in ``infos`` right after the step that applied the action
    (for the encoder, its own step).
    """

    metadata = raw_env.metadata

    def __init__(self, **kwargs: Any):
        super().__init__()
        self.env = raw_env(**kwargs)
        self.possible_agents = list(SEATS)
        self.render_mode = None

    @property
    def unwrapped(self) -> raw_env:
        return self.env

    def observation_space(self, agent: str):
        return self.env.observation_space(agent)

    def action_space(self, agent: str):
        return self.env.action_space(agent)

    def observe(self, agent: str):
        return self._observations[agent]

    def reset(self, seed: int | None = None, options: Mapping[str, Any] | None = None) -> None:
        self._observations, self.infos = self.env.reset(seed=seed, options=options)
        self.agents = list(self.env.agents)
        self.rewards = {a: 0 for a in self.agents}
        self._cumulative_rewards = {a: 0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self._actions: dict[str, Any] = {}
        self._queue = self.env.deciding()
        self.agent_selection = self._queue[0]

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        # checked now, so that the error names the agent that made it
        if self.env.phase == "hints":
            self.env.read_hints(action)
        else:
            self.env.read_guess(agent, action)
        self._cumulative_rewards[agent] = 0
        self._clear_rewards()
        self._actions[agent] = action
        self._queue.pop(0)
        if self._queue:
            self.agent_selection = self._queue[0]
            return
        observations, rewards, terminations, truncations, infos = self.env.step(self._actions)
        self._actions = {}
        self._observations = observations
        self.infos = infos
        self.rewards = dict(rewards)
        self.terminations = dict(terminations)
        self.truncations = dict(truncations)
        self._accumulate_rewards()
        if self.env.agents:
            self._queue = self.env.deciding()
            self.agent_selection = self._queue[0]
        else:
            self._deads_step_first()

    def close(self) -> None:
        self.env.close()


def parallel_env(**kwargs: Any) -> raw_env:
    return raw_env(**kwargs)


def env(**kwargs: Any):
    return wrappers.OrderEnforcingWrapper(aec_env(**kwargs))
