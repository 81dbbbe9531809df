"""The ids socialsim registers on ``import socialsim``: Gymnasium's, of the seat views, and
PettingZoo's, of the envs themselves.

Each Gymnasium id is a :class:`~socialsim.rl.view.SeatView` over one env with default seats that
need no data files nor network; ``gymnasium.make(id, seat=..., others=..., **env_kwargs)``
overrides them. Each env is in PettingZoo's registry (1.27) in both forms:
``pettingzoo.make("aec", "socialsim/donation-v0", n_agents=8)`` is
``socialsim.envs.donation_v0.env(n_agents=8)``, ``pettingzoo.make("parallel", ...)`` its
``parallel_env``. Registering costs only the entry-point strings: nothing of the views or the
envs is imported here.
"""

from __future__ import annotations

from typing import Any

_SCRIPTED_GOSSIP = {"kind": "stern_judging"}

#: Gymnasium id -> the SeatView's default keyword arguments
VIEWS: dict[str, dict[str, Any]] = {
    "socialsim/Donation-v0": {"env": "donation_v0", "seat": "agent_0", "others": _SCRIPTED_GOSSIP},
    "socialsim/Prisoners-v0": {
        "env": "prisoners_v0",
        "seat": "agent_0",
        "others": _SCRIPTED_GOSSIP,
    },
    "socialsim/Trust-v0": {"env": "trust_v0", "seat": "agent_0", "others": _SCRIPTED_GOSSIP},
    "socialsim/Market-v0": {"env": "market_v0", "seat": "agent_0", "others": _SCRIPTED_GOSSIP},
    "socialsim/Decrypto-v0": {
        "env": "decrypto_v0",
        "seat": "interceptor",
        "others": {
            "encoder": {"kind": "decrypto_random_encoder"},
            "decoder": {"kind": "decrypto_random_guesser"},
        },
    },
    "socialsim/MatchingPennies-v0": {
        "env": "matching_pennies_v0",
        "seat": "matcher",
        "others": {"kind": "pennies_random"},
    },
}


def pettingzoo_id(env_id: str) -> str:
    """The PettingZoo registry id of a bundled env: ``"donation_v0"`` -> ``"socialsim/donation-v0"``."""
    name, _, version = env_id.rpartition("_v")
    return f"socialsim/{name}-v{version}"


def register() -> None:
    """Register every id of :data:`VIEWS` with Gymnasium and every bundled env with PettingZoo
    (again is a no-op)."""
    register_views()
    register_envs()


def register_envs() -> None:
    from pettingzoo.env_registry.registration import aec_registry, parallel_registry
    from pettingzoo.env_registry.registration import register as pettingzoo_register

    from socialsim.registry import ENV_IDS

    for env_id in ENV_IDS:
        for form, registry, entry in (
            ("aec", aec_registry, "env"),
            ("parallel", parallel_registry, "parallel_env"),
        ):
            if pettingzoo_id(env_id) not in registry:
                pettingzoo_register(
                    form, pettingzoo_id(env_id), entry_point=f"socialsim.envs.{env_id}:{entry}"
                )


def register_views() -> None:
    """Register every id of :data:`VIEWS` with Gymnasium (again is a no-op)."""
    from gymnasium.envs.registration import register as gymnasium_register
    from gymnasium.envs.registration import registry

    for env_id, kwargs in VIEWS.items():
        if env_id not in registry:
            gymnasium_register(
                id=env_id, entry_point="socialsim.rl.view:SeatView", kwargs=dict(kwargs)
            )
