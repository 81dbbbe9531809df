"""``socialsim`` as a user runs it, in a subprocess: for tests of experiment files and of the CLI.

The child runs this interpreter's ``python -m socialsim`` offline (litellm reads its bundled
price table) and headless (matplotlib's Agg backend), so that a test sees exactly the exit status
and the lines a user would.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path


def environment(extra: Mapping[str, str] | None = None, path: Sequence[Path | str] = ()) -> dict:
    """This process's environment, offline and headless, with ``extra`` set and ``path``
    prepended to ``PYTHONPATH`` (a user's own agents or envs)."""
    env = {
        **os.environ,
        "MPLBACKEND": "Agg",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        **(extra or {}),
    }
    if path:
        env["PYTHONPATH"] = os.pathsep.join(
            [*map(str, path), *filter(None, [env.get("PYTHONPATH")])]
        )
    return env


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "socialsim", *args]


def run(
    *args: str,
    cwd: Path | str | None = None,
    extra_env: Mapping[str, str] | None = None,
    path: Sequence[Path | str] = (),
    timeout: float = 300,
) -> subprocess.CompletedProcess:
    """``socialsim ARGS...`` to its end; its output captured as text."""
    return subprocess.run(
        command(*args),
        cwd=cwd,
        env=environment(extra_env, path),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def start(*args: str, cwd: Path | str | None = None, **popen: object) -> subprocess.Popen:
    """``socialsim ARGS...`` started and left running (to signal it, or to read it live)."""
    popen.setdefault("stdout", subprocess.PIPE)
    popen.setdefault("stderr", subprocess.PIPE)
    return subprocess.Popen(command(*args), cwd=cwd, env=environment(), **popen)
