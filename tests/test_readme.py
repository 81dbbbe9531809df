"""The README's examples run as written: every Python snippet, and every `socialsim` command line
the main job's state allows (no model, no network, no person at a terminal), in the order the
README gives them, so it cannot drift from the code again."""

import re
import shlex
from pathlib import Path

import pytest

from socialsim.cli import main

README = Path(__file__).resolve().parent.parent / "README.md"
# what needs a model, a network, a person or a file socialsim does not ship (the reader's own
# experiment file or session directory)
NEEDS_MORE = (
    "llm_",
    "smollm2",
    "play ",
    "serve",
    "replay",
    "...",
    "$",
    "OPENAI",
    "mine.toml",
    "SESSION",
)


def test_python_snippets_in_the_readme_run():
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)
    assert blocks
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})


def command_lines() -> list[str]:
    """Every `socialsim ...` command in the README's bash blocks (a line continued with a
    backslash joined, `&&` chains split, comments dropped)."""
    lines = []
    for block in re.findall(r"```bash\n(.*?)```", README.read_text(), flags=re.DOTALL):
        for line in block.replace("\\\n", " ").splitlines():
            for part in line.split("&&"):
                part = part.split("  #")[0].strip()
                if part.startswith("socialsim "):
                    lines.append(part)
    return lines


def test_the_readme_names_the_main_job_and_its_comparison():
    lines = command_lines()
    assert "socialsim run align_evolution --out results/align_evolution" in lines
    assert "socialsim report results/aq results/aq_off --out results/aq_vs_off" in lines


@pytest.mark.slow
def test_every_command_line_the_main_job_allows_runs_and_exits_0(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    ran = []
    for line in command_lines():
        if any(marker in line for marker in NEEDS_MORE):
            continue
        code = main(shlex.split(line)[1:])
        capsys.readouterr()
        assert code == 0, line
        ran.append(line)
    # the main job, the four run examples, the comparison, list
    assert len(ran) >= 9
    assert (tmp_path / "results" / "aq_vs_off" / "contrasts.csv").is_file()
