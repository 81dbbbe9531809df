"""The Gymnasium ids of the seat views, registered by ``import socialsim``.

Each id is a :class:`~socialsim.rl.view.SeatView` over one env with default seats that need no
data files nor network; ``gymnasium.make(id, seat=..., others=..., **env_kwargs)`` overrides
them. Registering costs only the entry-point strings: nothing of the view is imported here.
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


def register() -> None:
    """Register every id of :data:`VIEWS` with Gymnasium (again is a no-op)."""
    from gymnasium.envs.registration import register as gymnasium_register
    from gymnasium.envs.registration import registry

    for env_id, kwargs in VIEWS.items():
        if env_id not in registry:
            gymnasium_register(
                id=env_id, entry_point="socialsim.rl.view:SeatView", kwargs=dict(kwargs)
            )
