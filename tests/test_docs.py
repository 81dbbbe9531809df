"""docs/papers.md and docs/deviations.md: every row names its command or the test that pins it,
and every command and test named exists."""

from __future__ import annotations

import re
from pathlib import Path

from socialsim import config

ROOT = Path(__file__).resolve().parents[1]


def _rows(name: str) -> list[str]:
    text = (ROOT / "docs" / name).read_text(encoding="utf-8")
    return [
        line
        for line in text.splitlines()
        if line.startswith("| ")
        and not line.startswith("| #")
        and not line.startswith("|---")
        and not line.startswith("| figure")
        and not line.startswith("| what")
    ]


def test_every_deviation_names_tests_that_exist():
    rows = _rows("deviations.md")
    assert len(rows) >= 20
    for row in rows:
        pins = re.findall(r"`(tests/[\w/]+\.py)(?:::(\w+))?`|`::(\w+)`", row)
        assert pins, f"no test pins: {row[:80]}"
        current = None
        for path, test, also in pins:
            current = path or current
            source = (ROOT / current).read_text(encoding="utf-8")
            name = test or also
            assert f"def {name}(" in source, f"{current}::{name} does not exist"


def test_every_paper_row_names_a_bundled_experiment_command_and_a_file():
    bundled = set(config.bundled_experiments())
    rows = _rows("papers.md")
    assert len(rows) >= 20
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert len(cells) in (2, 3) and cells[-1], row[:80]
        if len(cells) == 3:  # a paper's figure: how to make it
            assert re.search(r"socialsim|the same run|any .*(run|file)", cells[1]), row[:80]
        for name in re.findall(
            r"socialsim (?:run|replay \S+ --with) ([a-z]\w+)",
            cells[-1] if len(cells) == 2 else cells[1],
        ):
            assert name in bundled, f"{name} is not a bundled experiment"


def test_every_bundled_experiment_says_what_it_demonstrates_and_what_it_cannot():
    from importlib import resources

    for name in config.bundled_experiments():
        text = (resources.files("socialsim.experiments") / f"{name}.toml").read_text()
        header = text.split("\nname = ")[0]
        assert "# What it demonstrates: " in header, name
        assert "# What it cannot: " in header, name


def test_nothing_a_user_reads_points_outside_the_repository():
    # .ci/run is the CI machine's script: it installs a wheel that machine keeps beside the
    # repository, and no user runs it
    folder = "shared"  # the workplace's folder beside the repository, spelt so this line is not
    outside = (f"../{folder}", f"/work/{folder}")
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sorted(ROOT.rglob("*"))
        if path.suffix in (".md", ".py", ".toml", ".txt", ".html", ".js")
        and not {".git", ".venv", ".ci", "node_modules"} & set(path.relative_to(ROOT).parts)
        and path.is_file()
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
        if any(o in line for o in outside)
    ]
    assert found == []
