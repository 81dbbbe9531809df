"""The MARL libraries' own PettingZoo paths over socialsim (docs/marl_libraries.md): each script
of experiments/train/libraries/ constructs its library's env, trains on the donation game until
the donors' cooperation falls (cooperating costs 1 at once) and rolls out a Decrypto game.

Each test runs where its library is installed: .ci/run installs TorchRL, Tianshou, SuperSuit and
sb3-contrib in a venv of their own (.venv-marl) and runs this file there; the main venv has
sb3-contrib only."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

LIBRARIES = Path(__file__).resolve().parent.parent / "experiments" / "train" / "libraries"

#: each script, the modules it needs, and its training budget on the donation game
SCRIPTS = {
    "with_torchrl": (("torchrl", "tensordict"), 2400),
    "with_tianshou": (("tianshou",), 2000),
    "with_supersuit_sb3": (("supersuit", "stable_baselines3"), 3000),
    "with_maskable_ppo": (("sb3_contrib",), 3000),
}


def run(name: str) -> dict:
    modules, steps = SCRIPTS[name]
    for module in modules:
        pytest.importorskip(module)
    if str(LIBRARIES) not in sys.path:  # the scripts import their shared matrix.py, as when run
        sys.path.insert(0, str(LIBRARIES))
    spec = importlib.util.spec_from_file_location(name, LIBRARIES / f"{name}.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    return script.main(["--steps", str(steps)])


@pytest.mark.slow
@pytest.mark.parametrize("name", SCRIPTS)
def test_the_library_learns_the_donation_game_and_rolls_out_decrypto(name):
    result = run(name)
    first, last = result["donation"]["cooperation"]
    assert first > 0.05, f"the untrained policy never cooperates: {first}"
    assert last < first / 2, f"cooperation did not fall: {first} -> {last}"
    decrypto = result["decrypto"]
    rewards = decrypto["rewards"]
    values = list(rewards.values()) if isinstance(rewards, dict) else rewards
    assert decrypto["steps"] >= 4  # at least a turn: three hints and the guesses
    assert sorted(values) in ([-1, -1, 1], [-1, 1, 1])  # the game's end: one side won
