"""The checks of the socialsim env contract (stated in :mod:`socialsim.testing.contract`).

Each runner plays its own episodes through :mod:`socialsim.testing.driver` and records what it
finds in a :class:`~socialsim.testing.findings.Findings`. One episode of legal play serves the
checks that only watch (:data:`~socialsim.testing.findings.OBSERVED`); forbidden and malformed
actions, seeding, rendering and PettingZoo's tests each get episodes of their own, so that a
failure of one is not blamed on another.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils.env_checker import data_equivalence

from socialsim.testing.driver import (
    bus_json,
    decision_of,
    driver,
    forbidden_action,
    legal_actions,
    malformed_actions,
    mask_of,
    mask_parts,
    usable_parts,
)
from socialsim.testing.findings import Context, Findings, describe, show

# -- the episode of legal play: decisions, masks, bus, frozen observations ------------------------


def _run_observed(c: Context, wanted: tuple[str, ...]) -> None:
    env = c.make()
    d = driver(env)
    rng = np.random.default_rng(c.seed)
    findings = c.findings
    masked = _declares_masks(env)
    try:
        d.reset(c.seed)
        if "bus" in wanted:
            _check_rules_message(env, findings)
        while True:
            if "decisions" in wanted or "aec_selection" in wanted:
                _check_decisions(d, findings, wanted)
            if "masks" in wanted:
                _check_masks(d, findings, masked)
            if d.over or d.steps >= c.max_steps:
                break
            actions = legal_actions(d, rng)
            if not actions:
                where = f"step {d.steps}: no agent has a decision"
                findings.fail("decisions", f"{where}, yet {d.live()} are live")
                break
            d.step(actions)
            if d.form == "parallel" and "forbidden_action" in wanted:
                for agent in actions:
                    if isinstance(d.info(agent), Mapping) and "invalid_action" in d.info(agent):
                        flag = d.info(agent)["invalid_action"]
                        legal = f"{agent}'s legal action {show(actions[agent])}"
                        findings.fail("forbidden_action", f"step {d.steps}: {legal} got {flag!r}")
    except Exception as error:  # noqa: BLE001
        findings.fail("episode", f"step {d.steps} of random legal actions raised {describe(error)}")
    if not d.over and not findings.failed("episode"):
        findings.warn("episode", f"the episode did not end within max_steps={c.max_steps} steps")
    if "bus" in wanted:
        _check_audiences(env, findings)
    if "frozen_observations" in wanted:
        _check_frozen(d, findings)


def _declares_masks(env: Any) -> bool:
    for agent in env.possible_agents:
        space = env.observation_space(agent)
        if isinstance(space, spaces.Dict) and "action_mask" in space.spaces:
            return True
    return False


def _check_decisions(d: Any, findings: Findings, wanted: tuple[str, ...]) -> None:
    infos = d.infos if d.form == "parallel" else {a: d.info(a) for a in d.env.agents}
    for agent in d.live():
        if agent not in infos:
            findings.fail("decisions", f"step {d.steps}: live agent {agent} has no info")
    for agent, info in infos.items():
        if not isinstance(info, Mapping) or "decision" not in info:
            findings.fail(
                "decisions", f"step {d.steps}: infos[{agent!r}] has no 'decision': {info!r}"
            )
        elif not (info["decision"] is None or isinstance(info["decision"], str)):
            value = info["decision"]
            findings.fail("decisions", f"step {d.steps}: {agent}'s decision {value!r} is no str")
    if d.over:
        return
    if "decisions" in wanted and not any(decision_of(d.info(a)) is not None for a in d.live()):
        findings.fail(
            "decisions", f"step {d.steps}: no live agent has a decision ({d.live()} live)"
        )
    if d.form == "aec" and "aec_selection" in wanted:
        agent = d.env.agent_selection
        if decision_of(d.info(agent)) is None:
            findings.fail(
                "aec_selection",
                f"step {d.steps}: the AEC form selected {agent}, whose decision is None",
            )


def _check_masks(d: Any, findings: Findings, masked: bool) -> None:
    for agent in d.live():
        info = d.info(agent)
        decision = decision_of(info)
        mask = mask_of(d.observation(agent), info)
        space = d.env.action_space(agent)
        where = f"step {d.steps}: {agent} (decision {decision!r})"
        if mask is None:
            if decision is not None and masked:
                findings.fail("masks", f"{where} has no action_mask; every decision needs one")
            elif decision is not None:
                findings.warn(
                    "masks", "no observation carries an action_mask: forbidden actions go unchecked"
                )
            continue
        parts = mask_parts(space, mask)
        if parts is None:
            findings.fail(
                "masks", f"{where}: action_mask of shape {np.shape(mask)} does not fit {space}"
            )
        elif not all(np.isin(part, (0, 1)).all() for part in parts):
            findings.fail(
                "masks", f"{where}: action_mask holds values other than 0 and 1: {mask!r}"
            )
        elif decision is None and any(np.flatnonzero(part).tolist() != [0] for part in parts):
            allowed = np.flatnonzero(np.concatenate(parts)).tolist()
            findings.fail(
                "masks", f"{where}: action_mask allows {allowed}; it must allow only the no-op, 0"
            )
        elif decision is not None and not all(part.any() for part in parts):
            findings.fail("masks", f"{where}: the action_mask allows no action")


def _check_rules_message(env: Any, findings: Findings) -> None:
    bus = getattr(env.unwrapped, "bus", None)
    if bus is None:
        findings.fail("bus", "env.unwrapped.bus does not exist after reset")
        return
    log = bus.log
    if not log:
        findings.fail(
            "bus",
            "the bus is empty after reset; the first message must be the public 'rules' message",
        )
        return
    first = log[0]
    if (first.kind, first.to, first.turn) != ("rules", "*", 1):
        findings.fail(
            "bus",
            f"the first message is kind={first.kind!r} to={first.to!r} turn={first.turn}; "
            "it must be kind='rules' to='*' at turn 1",
        )


def _check_audiences(env: Any, findings: Findings) -> None:
    bus = getattr(env.unwrapped, "bus", None)
    if bus is None:
        return
    agents = frozenset(bus.agents)
    audiences = {}
    for message in bus.log:
        to = message.to
        if to == "*":
            audience = agents
        elif isinstance(to, str) and to.startswith("team:") and to[5:] in bus.teams:
            audience = frozenset(bus.teams[to[5:]])
        elif isinstance(to, tuple) and to and frozenset(to) <= agents:
            audience = frozenset(to)
        else:
            allowed = "'*', 'team:NAME' of a team of the bus, or agents of the bus"
            findings.fail(
                "bus", f"message {message.id} ({message.kind}) is to {to!r}, not {allowed}"
            )
            continue
        audiences[message.id] = audience
    for agent in agents:
        for message in bus.visible_to(agent):
            if message.id in audiences and agent not in audiences[message.id]:
                held = f"message {message.id} ({message.kind}) to {message.to!r}"
                findings.fail("bus", f"{agent}'s inbox holds {held}")


def _check_frozen(d: Any, findings: Findings) -> None:
    for where, returned, copy in d.returned:
        if not data_equivalence(returned, copy):
            changed = ""
            if isinstance(copy, Mapping):
                keys = [k for k in copy if not data_equivalence(returned.get(k), copy[k])]
                changed = f" (key {keys[0]!r} was {copy[keys[0]]!r})" if keys else ""
            findings.fail(
                "frozen_observations", f"the observation returned at {where} changed later{changed}"
            )
            return


# -- interventions: forbidden and malformed actions -----------------------------------------------


def _run_forbidden(c: Context, wanted: tuple[str, ...]) -> None:
    d = driver(c.make())
    rng = np.random.default_rng(c.seed + 1)
    d.reset(c.seed)
    tried: set[Any] = set()
    while not d.over and d.steps < c.max_steps:
        actions = legal_actions(d, rng)
        target = None
        for agent in actions:
            decision = decision_of(d.info(agent))
            parts = usable_parts(d, agent)
            space = d.env.action_space(agent)
            bad = None if decision in tried else forbidden_action(space, parts, rng)
            if bad is not None:
                target, actions[agent] = (agent, decision, bad), bad
                tried.add(decision)
                break
        if target is None:
            d.step(actions)
            continue
        agent, decision, bad = target
        where = f"step {d.steps}: {agent}'s forbidden action {show(bad)} for {decision!r}"
        try:
            d.step(actions)
        except Exception as error:  # noqa: BLE001
            c.findings.fail("forbidden_action", f"{where} raised {describe(error)}, not a fallback")
            return
        flag = (d.after.get(agent) or {}).get("invalid_action")
        reason = flag.get("reason") if isinstance(flag, Mapping) else None
        if not (isinstance(reason, str) and reason and "fallback" in flag):
            expected = "{'reason': str, 'fallback': ...}"
            c.findings.fail(
                "forbidden_action", f"{where}: invalid_action is {flag!r}, not {expected}"
            )
            return
    if not tried:
        c.findings.warn(
            "forbidden_action",
            "no mask forbade an action of a decision: the fallbacks went unchecked",
        )


STATE = ("bus log", "turn", "agents", "agent_selection")


def _state(d: Any) -> tuple[Any, ...]:
    """What a rejected action must leave as it was (the names in :data:`STATE`)."""
    env = d.env
    selection = getattr(env, "agent_selection", None) if d.form == "aec" else None
    return bus_json(env), getattr(env.unwrapped, "turn", None), list(env.agents), selection


def _run_malformed(c: Context, wanted: tuple[str, ...]) -> None:
    d = driver(c.make())
    rng = np.random.default_rng(c.seed + 2)
    d.reset(c.seed)
    tried: set[Any] = set()
    findings = c.findings
    while not d.over and d.steps < c.max_steps:
        actions = legal_actions(d, rng)
        agent = next((a for a in actions if decision_of(d.info(a)) not in tried), None)
        if agent is not None:
            decision = decision_of(d.info(agent))
            tried.add(decision)
            for bad in malformed_actions(d.env.action_space(agent)):
                where = f"step {d.steps}: {agent}'s malformed action {show(bad)} for {decision!r}"
                before = _state(d)
                try:
                    d.env.step({**actions, agent: bad} if d.form == "parallel" else bad)
                except ValueError:
                    pass
                except Exception as error:  # noqa: BLE001
                    findings.fail(
                        "malformed_action", f"{where} raised {describe(error)}, not ValueError"
                    )
                else:
                    findings.fail(
                        "malformed_action", f"{where} was accepted; it must raise ValueError"
                    )
                    return
                after = _state(d)
                if after != before:
                    changed = [n for n, x, y in zip(STATE, before, after, strict=True) if x != y]
                    findings.fail("malformed_action", f"{where} changed the {', '.join(changed)}")
                    return
        try:
            d.step(actions)
        except Exception as error:  # noqa: BLE001
            where = f"step {d.steps}: the legal step after a rejected malformed action"
            findings.fail("malformed_action", f"{where} raised {describe(error)}")
            return


# -- seeding, render, spaces, PettingZoo's own tests --------------------------------------------


def _play(env: Any, c: Context, replay: list[dict[str, Any]] | None = None):
    """``(trace, bus log, actions taken)`` of an episode from ``reset(seed)``."""
    d = driver(env)
    d.reset(c.seed)
    rng = np.random.default_rng(c.seed)
    taken: list[dict[str, Any]] = []
    while not d.over and d.steps < c.max_steps:
        if replay is None:
            actions = legal_actions(d, rng)
        elif len(taken) < len(replay) and set(replay[len(taken)]) == set(d.pending()):
            actions = replay[len(taken)]
        else:
            break  # the runs diverged: the traces differ from here
        taken.append(actions)
        d.step(actions)
    return d.trace, bus_json(env), taken


def _run_seeding(c: Context, wanted: tuple[str, ...]) -> None:
    first_env = c.make()
    trace, log, actions = _play(first_env, c)
    for label, env in (("a second env", c.make()), ("the same env reset again", first_env)):
        other_trace, other_log, _ = _play(env, c, actions)
        what = f"{label}, reset with seed {c.seed} and given the same actions,"
        k = _first_difference(trace, other_trace)
        if k is not None:
            c.findings.fail("seeding", f"{what} returns other {_part(trace, other_trace, k)}")
            return
        k = _first_difference(log or [], other_log or [])
        if k is not None:
            c.findings.fail(
                "seeding", f"{what} logs another message {k}: {_part(log, other_log, k)}"
            )
            return


def _part(one: list[Any] | None, other: list[Any] | None, k: int) -> str:
    """Where the ``k``-th items of two runs differ, in a few words."""
    a = one[k] if one and k < len(one) else None
    b = other[k] if other and k < len(other) else None
    if a is None or b is None:
        return f"items after {k} (one run is longer)"
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        keys = [key for key in a if not data_equivalence(a.get(key), b.get(key))] or ["?"]
        return f"{keys[0]!r} at {k}: {a.get(keys[0])!r} vs {b.get(keys[0])!r}"
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
        names = TRACE_FIELDS.get(len(a), [f"item {i}" for i in range(len(a))])
        i = next(i for i in range(len(a)) if not data_equivalence(a[i], b[i]))
        return f"{names[i]} at step {k}"
    return f"values at {k}: {a!r} vs {b!r}"


# the items of a driver's trace entry: Parallel (obs, rewards, terms, truncs), AEC last()
TRACE_FIELDS = {
    4: ["observations", "rewards", "terminations", "truncations"],
    5: ["selected agent", "observation", "reward", "termination", "truncation"],
}


def _first_difference(one: list[Any], other: list[Any]) -> int | None:
    for i, (a, b) in enumerate(zip(one, other, strict=False)):
        if not data_equivalence(a, b):
            return i
    return None if len(one) == len(other) else min(len(one), len(other))


def _run_render(c: Context, wanted: tuple[str, ...]) -> None:
    modes = (c.make().metadata or {}).get("render_modes", [])
    if "ansi" not in modes:
        c.findings.fail("render", f"metadata['render_modes'] is {modes!r}; it must list 'ansi'")
        return
    env = c.make(render_mode="ansi")
    d = driver(env)
    d.reset(c.seed)
    for moment in ("after reset", "after a step"):
        text = env.render()
        if not isinstance(text, str) or not text.strip():
            c.findings.fail("render", f"render() {moment} returned {text!r}, not a non-empty str")
            return
        if d.over:
            return
        d.step(legal_actions(d, np.random.default_rng(c.seed)))


def _run_spaces(c: Context, wanted: tuple[str, ...]) -> None:
    env = c.make()
    env.reset(seed=c.seed)
    for agent in env.possible_agents:
        if env.observation_space(agent) is not env.observation_space(agent):
            c.findings.fail("spaces", f"observation_space({agent!r}) is a new object at each call")
            return
        if env.action_space(agent) is not env.action_space(agent):
            c.findings.warn("spaces", f"action_space({agent!r}) is a new object at each call")


def _run_pettingzoo_api(c: Context, wanted: tuple[str, ...]) -> None:
    from pettingzoo.test import api_test, parallel_api_test

    test = parallel_api_test if c.form == "parallel" else api_test
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            test(c.make(), num_cycles=c.num_cycles)
    except Exception as error:  # noqa: BLE001
        c.findings.fail("pettingzoo_api", f"{test.__name__} failed: {describe(error)}")


def _run_pettingzoo_seed(c: Context, wanted: tuple[str, ...]) -> None:
    from pettingzoo.test import parallel_seed_test, seed_test

    test = parallel_seed_test if c.form == "parallel" else seed_test
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            test(c.make, num_cycles=c.num_cycles)
    except Exception as error:  # noqa: BLE001
        c.findings.fail("pettingzoo_seed", f"{test.__name__} failed: {describe(error)}")


RUNNERS: tuple[tuple[str, Callable[[Context, tuple[str, ...]], None]], ...] = (
    ("episode", _run_observed),
    ("forbidden_action", _run_forbidden),
    ("malformed_action", _run_malformed),
    ("seeding", _run_seeding),
    ("render", _run_render),
    ("spaces", _run_spaces),
    ("pettingzoo_api", _run_pettingzoo_api),
    ("pettingzoo_seed", _run_pettingzoo_seed),
)
