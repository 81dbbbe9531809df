"""The install layout: envs/ and agents/ install as socialsim.envs and socialsim.agents only."""

import ast
import subprocess
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAPPING = {
    "socialsim": "socialsim",
    "socialsim.envs": "envs",
    "socialsim.agents": "agents",
    "socialsim.experiments": "experiments",
}


def listed_packages() -> set[str]:
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert data["tool"]["setuptools"]["package-dir"] == MAPPING
    return set(data["tool"]["setuptools"]["packages"])


def test_every_package_folder_is_listed_in_pyproject():
    found = set()
    for name, folder in MAPPING.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(ROOT / folder)
            found.add(".".join([name, *relative.parts]) if relative.parts else name)
    assert found <= listed_packages(), (
        f"add to pyproject packages: {sorted(found - listed_packages())}"
    )


def test_top_level_is_exactly_the_documented_layout():
    allowed = {
        "pyproject.toml",
        "socialsim",
        "envs",
        "agents",
        "experiments",
        "tests",
        "docs",
        "README.md",
        "ARCHITECTURE.md",
        ".ci",
        "LICENSE",
        ".gitignore",
    }
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert {path.split("/")[0] for path in tracked} <= allowed


# -- no global RNG: random.seed / np.random.seed and the module-level draws are bugs here ---------

GLOBAL_RANDOM = {
    "seed",
    "random",
    "randint",
    "choice",
    "choices",
    "shuffle",
    "sample",
    "uniform",
    "gauss",
    "randrange",
    "getrandbits",
}
NUMPY_ALLOWED = {"default_rng", "Generator", "SeedSequence", "PCG64", "RandomState", "BitGenerator"}


def global_rng_calls(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        chain = []
        target = node.func
        while isinstance(target, ast.Attribute):
            chain.append(target.attr)
            target = target.value
        if isinstance(target, ast.Name):
            chain.append(target.id)
        chain.reverse()
        if chain[:1] == ["random"] and len(chain) == 2 and chain[1] in GLOBAL_RANDOM:
            found.append(".".join(chain))
        if chain[:2] in (["np", "random"], ["numpy", "random"]) and len(chain) == 3:
            if chain[2] not in NUMPY_ALLOWED or (chain[2] == "RandomState" and not node.args):
                found.append(".".join(chain))
    return found


def test_the_checker_catches_global_rng_use():
    assert global_rng_calls("import random\nrandom.seed(1)\nrandom.random()") == [
        "random.seed",
        "random.random",
    ]
    assert global_rng_calls("np.random.seed(0)\nnp.random.rand(3)\nnp.random.RandomState()") == [
        "np.random.seed",
        "np.random.rand",
        "np.random.RandomState",
    ]
    assert global_rng_calls("np.random.default_rng(3).random()\nnp.random.RandomState(7)") == []


def test_no_code_uses_a_global_rng():
    offenders = {}
    for folder in ("socialsim", "envs", "agents", "experiments", "tests"):
        for path in (ROOT / folder).rglob("*.py"):
            if path.name == "test_packaging.py":
                continue
            calls = global_rng_calls(path.read_text())
            if calls:
                offenders[str(path.relative_to(ROOT))] = calls
    assert offenders == {}
