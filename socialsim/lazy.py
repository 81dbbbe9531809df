"""A package's public names imported on first use (PEP 562), so that importing the package
costs nothing until one is asked for::

    __getattr__ = lazy.attributes(__name__, {"Evolution": "socialsim.society.evolution"})
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any


def attributes(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package``: each name of ``homes`` from its module."""

    def __getattr__(name: str) -> Any:
        if name not in homes:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(import_module(homes[name]), name)

    return __getattr__
