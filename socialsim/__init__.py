"""socialsim: a multi-agent social simulation environment for gossip and theory-of-mind games.

The Python API, for notebooks and scripts (each imported on first use, so that
``import socialsim`` stays cheap):

* :func:`make` ``(env_id, form="aec", **kwargs)``: a PettingZoo env by id (``socialsim list``
  shows them), AEC as PettingZoo's ``env()`` or ``form="parallel"``;
* :func:`run` ``(experiment, out=None, overrides=())``: what ``socialsim run`` does, returning a
  :class:`~socialsim.results.Results`;
* :func:`load` ``(results_dir)``: the tidy pandas frames of a results directory
  (:class:`~socialsim.results.Frames`: episodes, agent_episodes, steps, messages, llm_calls).
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

# The Gymnasium seat views (socialsim/Donation-v0, ...): ids and entry-point strings only.
from socialsim.rl.registration import register as _register_views

_register_views()


def make(env_id: str, form: str = "aec", **kwargs: Any):
    """The PettingZoo env ``env_id`` built with ``kwargs``: its AEC form (``form="aec"``, what
    PettingZoo's ``env()`` returns) or its Parallel form (``form="parallel"``)."""
    from socialsim import registry

    return registry.make_env(env_id, form, **kwargs)


def run(experiment, out=None, overrides=(), **options: Any):
    """Play the episodes of ``experiment`` (a file path, a bundled name, a config dict) that
    ``out`` does not hold yet; see :func:`socialsim.results.run`."""
    from socialsim import results

    return results.run(experiment, out, overrides, **options)


def load(results_dir):
    """The tidy frames of the results directory ``results_dir``; see
    :func:`socialsim.results.load`."""
    from socialsim import results

    return results.load(results_dir)
