"""The import walls of DESIGN.md, read from the source with ``ast`` (nothing is imported).

A lazy import inside a function counts as one at the top of the file; relative imports are
resolved; installed names map back to folders (``socialsim.envs`` -> ``envs/``,
``socialsim.agents`` -> ``agents/``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"socialsim.envs": "envs", "socialsim.agents": "agents", "socialsim": "socialsim"}

# The terminal and web front ends build agents for a person's seat.
AGENT_IMPORT_EXEMPT: tuple[str, ...] = ("socialsim/play/", "socialsim/web/")

IO_MODULES = frozenset(
    {
        "io",
        "os",
        "pathlib",
        "json",
        "socket",
        "asyncio",
        "sqlite3",
        "shutil",
        "tempfile",
        "subprocess",
        "pickle",
        "csv",
        "urllib",
        "http",
        "aiohttp",
        "requests",
        "httpx",
    }
)
THIRD_PARTY_LLM = frozenset({"litellm", "openai"})


def module_name(path: Path) -> str:
    """The installed dotted name of a repository file: ``envs/gossip/core.py`` ->
    ``socialsim.envs.gossip.core``."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    top = {"envs": "socialsim.envs", "agents": "socialsim.agents"}.get(parts[0], parts[0])
    return ".".join([top, *parts[1:]])


def imports(path: Path) -> Iterator[tuple[int, str]]:
    """(line, dotted module) of every import in ``path``; ``from m import x`` gives ``m`` and
    ``m.x`` (x may be a submodule)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module_name(path).rsplit(".", 1)[0] if path.name != "__init__.py" else None
    package = package or module_name(path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            yield node.lineno, base
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}"


def within(module: str, *prefixes: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def files(*folders: str) -> list[Path]:
    return sorted(p for folder in folders for p in (ROOT / folder).rglob("*.py"))


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def broken(paths: list[Path], forbidden) -> list[str]:
    """``file:line imports module`` for each import for which ``forbidden(module)`` is true."""
    return [
        f"{rel(path)}:{line} imports {module}"
        for path in paths
        for line, module in imports(path)
        if forbidden(module)
    ]


def test_the_engine_and_the_envs_never_import_the_agents_package():
    paths = [p for p in files("socialsim", "envs") if not rel(p).startswith(AGENT_IMPORT_EXEMPT)]
    found = broken(paths, lambda m: within(m, "socialsim.agents"))
    assert not found, "the engine and the envs never import socialsim.agents: " + "; ".join(found)


def test_game_cores_import_no_bus_no_io_no_agent_and_no_llm_code():
    cores = sorted((ROOT / "envs").glob("*/core.py"))
    assert cores, "no game core found under envs/*/core.py"

    def forbidden(module: str) -> bool:
        return (
            within(module, "socialsim.bus", "socialsim.records", "socialsim.runner")
            or within(module, "socialsim.agents", "socialsim.llm")
            or module.split(".")[0] in IO_MODULES | THIRD_PARTY_LLM
        )

    found = broken(cores, forbidden)
    assert not found, "a game core imports no bus, I/O, agent or LLM code: " + "; ".join(found)


def test_only_the_llm_layer_imports_litellm():
    paths = [
        p
        for p in files("socialsim", "envs", "agents", "experiments", "tests")
        if not rel(p).startswith("socialsim/llm/")
    ]
    found = broken(paths, lambda m: m.split(".")[0] == "litellm")
    assert not found, "only socialsim/llm/ imports litellm: " + "; ".join(found)


@pytest.mark.parametrize("name", ["socialsim/bus.py", "socialsim/plain_json.py"])
def test_the_bus_and_the_canonical_json_import_nothing_of_the_project(name):
    found = broken([ROOT / name], lambda m: within(m, "socialsim"))
    assert not found, f"{name} imports nothing of the project: " + "; ".join(found)


def test_the_analysis_imports_neither_the_runner_nor_the_llm_layer():
    found = broken(
        files("socialsim/analysis"),
        lambda m: within(m, "socialsim.runner", "socialsim.llm") or m.split(".")[0] == "litellm",
    )
    assert not found, "the analysis reads records; it runs nothing: " + "; ".join(found)


# -- benchmarks measure the library as shipped ----------------------------------------------------


def library_modules() -> set[str]:
    """Top-level names of every module the library and the benchmarks import (``litellm``,
    ``numpy``...): a variable of that name in a benchmark is taken to be the module."""
    return {
        module.split(".")[0]
        for path in files("socialsim", "envs", "agents", "experiments/bench")
        for _, module in imports(path)
    }


def patches(source: str, where: str, module_names: set[str]) -> list[str]:
    """``where:line what`` for each monkeypatch in ``source``: an assignment to (or ``setattr``
    on) an attribute of an imported name or of a module-named variable, or ``mock.patch``."""
    tree = ast.parse(source, filename=where)
    imported: dict[str, str] = {}  # local name -> what it was imported as
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                imported[(alias.asname or alias.name).split(".")[0]] = alias.name
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                imported[alias.asname or alias.name] = f"{node.module}.{alias.name}"

    def root(node: ast.AST) -> str | None:
        while isinstance(node, ast.Attribute):
            node = node.value
        return node.id if isinstance(node, ast.Name) else None

    def library(name: str | None) -> bool:
        return name is not None and (name in imported or name in module_names)

    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        targets: list[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for target in targets:
            if isinstance(target, ast.Attribute) and library(root(target)):
                found.append((node.lineno, f"assigns {ast.unparse(target)}"))
        if isinstance(node, ast.Call):
            called = ast.unparse(node.func)
            if called in ("setattr", "delattr") and node.args and library(root(node.args[0])):
                found.append((node.lineno, f"calls {called}({ast.unparse(node.args[0])}, ...)"))
            origin = imported.get(called.split(".")[0], "")
            if called.split(".")[-1] == "patch" and within(origin, "unittest.mock", "mock"):
                found.append((node.lineno, f"calls {called}"))
    return [f"{where}:{line} {what}" for line, what in sorted(found)]


def test_benchmarks_do_not_monkeypatch_library_internals():
    names = library_modules()
    found = [
        line
        for path in files("experiments/bench")
        for line in patches(path.read_text(encoding="utf-8"), rel(path), names)
    ]
    assert not found, "benchmarks measure the library as shipped, unpatched: " + "; ".join(found)


def test_the_patch_detector_catches_assignments_setattr_and_mock_patch():
    source = (
        "import litellm as lm\n"
        "from unittest import mock\n"
        "from socialsim.llm import LiteLLMModel, load_litellm\n"
        "lm.telemetry = False\n"
        "LiteLLMModel._known_unpriced = None\n"
        "litellm = load_litellm()\n"
        "setattr(litellm, 'x', 1)\n"
        "mock.patch('litellm.acompletion')\n"
        "settings = {}\n"
        "settings['x'] = 1\n"
    )
    assert patches(source, "bench.py", {"litellm"}) == [
        "bench.py:4 assigns lm.telemetry",
        "bench.py:5 assigns LiteLLMModel._known_unpriced",
        "bench.py:7 calls setattr(litellm, ...)",
        "bench.py:8 calls mock.patch",
    ]


# -- no circles, no long files ------------------------------------------------------------------


def library_files() -> list[Path]:
    return [p for p in files("socialsim", "envs", "agents") if p.name != "__init__.py"]


def runtime_imports(path: Path) -> Iterator[str]:
    """The modules ``path`` imports when it runs: :func:`imports` less those under
    ``if TYPE_CHECKING:`` (read by type checkers only)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for inner in ast.walk(node)
    }
    lines = {
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in typing_only
    }
    for line, module in imports(path):
        if line in lines:
            yield module


def import_graph() -> dict[str, set[str]]:
    """Library file -> the library files it imports (a package's ``__init__`` left out: it
    gathers its modules, it is no layer of its own)."""
    named = {module_name(p): rel(p) for p in library_files()}
    return {
        rel(path): {named[m] for m in runtime_imports(path) if m in named} - {rel(path)}
        for path in library_files()
    }


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of files that import one another, directly or round a loop (Tarjan's
    strongly connected components, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            step = next(targets, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph[step]))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def test_no_library_files_import_each_other_directly_or_round_a_loop():
    assert circles(import_graph()) == []


def test_the_circle_finder_finds_a_loop_of_three_and_passes_a_chain():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_no_library_file_is_over_500_lines():
    long = {rel(p): n for p in library_files() if (n := len(p.read_text().splitlines())) > 500}
    assert long == {}, "split them by concern"
