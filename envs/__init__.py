"""Game environments, installed as ``socialsim.envs``.

One folder per game family (``gossip/``, ``decrypto/``, ``pennies/``) holds the pure game core and
the PettingZoo adapter; versioned shims such as ``donation_v0.py`` expose ``env()``,
``parallel_env()`` and ``raw_env`` as PettingZoo's own envs do. A rule change bumps the version.

The contract every env here keeps, on top of the PettingZoo API:

* ``env.unwrapped.bus`` is the :class:`socialsim.bus.MessageBus` of the current episode, created
  anew by ``reset``. Everything a language agent needs to know is published there.
* ``infos[agent]["decision"]`` names the decision ``agent`` must make now (``"donate"``,
  ``"gossip"``, ``"guess"``...) or is ``None``. In the Parallel form the runner asks only the
  agents with a decision; the env ignores actions from the others. Every env is a
  :class:`socialsim.envs.aec.DecisionEnv`, and its AEC form (``env()``, ``raw_env``) is the one
  :class:`~socialsim.envs.aec.DecisionAEC`, which selects only the agents with a decision.
* The first bus message of an episode is a public ``rules`` message (turn 1, to everyone): the
  settings a player is told; agents read the game's limits from it, never from their own options.
* ``action_mask``: one flat 0/1 vector over ``action_space(agent)`` (a ``Discrete`` space for
  every seat of the bundled envs; a ``MultiDiscrete`` space of your own takes a tuple, one vector
  per part, the form ``MultiDiscrete.sample(mask=...)`` reads): the legal actions of the
  decision due. An agent without a decision always has one legal action, the **no-op**: its
  mask allows only index 0 (:func:`socialsim.envs.aec.idle_mask`), which the env ignores, so a
  library that steps every agent of the Parallel form (or PettingZoo's ``parallel_to_aec``)
  always has an action to sample; ``infos[agent]["decision"] is None`` stays the marker. A
  choice of several parts is offered one part per step (the Decrypto encoder's three hints:
  one ``Discrete`` hint a step, three steps a turn), or whole in a language agent's dict.
* Actions: an element of ``action_space(agent)`` (the RL view), or for language agents a dict
  holding that element plus free text. Anything else is a ``ValueError`` that names the agent,
  the expected form and what it got, and leaves the state unchanged. An element the current
  action mask forbids is not an error: the env applies the decision's documented fallback and
  sets ``infos[agent]["invalid_action"] = {"reason": ..., "fallback": ...}``; the runner counts it.
* Rewards are raw payoffs of that step; discounting belongs to the metrics.
* ``env.unwrapped.turn`` is the current turn (round) number, starting at 1.
* ``render_mode="ansi"`` makes ``render()`` return the public state in a few lines (``"human"``
  prints it); ``state()`` is a global numeric state for centralised critics.
* Optional ``env.unwrapped.summary()`` returns a JSON-like dict of the episode's outcome that
  the runner stores in the record (final resources, the Decrypto ending...).
"""
