"""The report's blocks: a :class:`Section` (a title, a table or text, and a note with the
units) and the :class:`Report` that lists them, printed as text (:func:`fmt`) and rendered by
:mod:`~socialsim.analysis.page` as one HTML file."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from socialsim.analysis import stats


@dataclass
class Section:
    """One block of the report: a table (or text) with a note saying what its numbers are."""

    title: str
    table: pd.DataFrame | None = None
    text: str = ""
    note: str = ""
    printed: bool = True  # False: in report.html and the CSV files only (a long table)
    in_page: bool = True  # False: in the printed text only (a digest of a table the page holds)


@dataclass
class Report:
    manifest: dict
    sections: list[Section] = field(default_factory=list)
    figures: list[Path] = field(default_factory=list)

    def text(self) -> str:
        lines: list[str] = []
        for section in self.sections:
            if not section.printed:
                continue
            if section.title:
                lines += ["", f"{section.title}:"] if lines else [f"{section.title}:"]
            if section.note:
                lines.append(f"  ({section.note})")
            if section.table is not None:
                lines.append(fmt(section.table))
            if section.text:
                lines.append(section.text)
        if self.figures:
            lines += ["", "figures: " + ", ".join(p.name for p in self.figures)]
        return "\n".join(lines)


def fmt(frame: pd.DataFrame) -> str:
    """A table as text, with :func:`~socialsim.analysis.stats.number` for every value."""
    if frame.empty:
        return "  (none)"
    formatters = {}
    for column in frame.columns:
        if frame[column].map(type).eq(str).all():
            width = int(frame[column].str.len().max())
            formatters[column] = lambda v, w=width: str(v).ljust(w)  # text reads left to right
        else:
            formatters[column] = stats.number
    return frame.to_string(index=False, na_rep=stats.UNDEFINED, formatters=formatters)
