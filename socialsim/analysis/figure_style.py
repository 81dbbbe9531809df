"""How every figure of the report is sized, styled, saved and checked.

Figures are drawn for a paper: :data:`COLUMN` (one column of a two-column page, 3.35 in) or
:data:`FULL` (the page width, 6.9 in) wide, with the fonts of a paper's body text
(:func:`paper`), and saved as PNG (300 dpi), PDF and SVG side by side (:func:`save`), so that a
figure goes into a paper without being redrawn. :func:`layout_problems` lists any text that
leaves the figure or overlaps another text; the tests render every figure of the bundled
quickstarts through it.
"""

from __future__ import annotations

import contextlib
import itertools
import textwrap
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path

import matplotlib
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text

COLUMN = 3.35  # inches: one column of a two-column paper (ICML, NeurIPS)
FULL = 6.9  # inches: the full text width
DPI = 300
FORMATS = ("png", "pdf", "svg")
STYLE = {
    "font.size": 7,
    "axes.titlesize": 7,
    "axes.labelsize": 7,
    "xtick.labelsize": 6,
    "ytick.labelsize": 6,
    "legend.fontsize": 6,
    "legend.title_fontsize": 6,
    "figure.titlesize": 8,
    "axes.linewidth": 0.6,
    "lines.linewidth": 1.0,
    "svg.fonttype": "none",  # text stays text in the SVG
    "pdf.fonttype": 42,  # TrueType in the PDF, as publishers ask
}


@contextlib.contextmanager
def paper() -> Iterator[None]:
    """The report's figure style, for the figures drawn inside the block."""
    with matplotlib.rc_context(STYLE):
        yield


def fill(text: str, figure: Figure, columns: int = 1, share: float = 0.8) -> str:
    """``text`` wrapped to the width of one of ``columns`` panels side by side (``share`` of
    it: the rest is the axis labels'), in the axes title's size."""
    size = STYLE["axes.titlesize"]
    chars = int(figure.get_figwidth() * share / max(1, columns) * 72 / (size * 0.56))
    width = max(16, chars)
    return "\n".join(
        textwrap.fill(line, width, break_long_words=False, break_on_hyphens=False)
        for line in text.split("\n")
    )


def suptitle(figure: Figure, text: str) -> None:
    """The figure's title, each line wrapped to the figure's width (a column-wide figure gets
    more, shorter lines rather than a title cut at both edges)."""
    size = STYLE["figure.titlesize"]
    chars = max(20, int(figure.get_figwidth() * 72 / (size * 0.56)))
    lines = [textwrap.fill(line, chars) for line in text.split("\n")]
    figure.suptitle("\n".join(lines))


#: what every figure saved now says of its run under its title (a partial or running run)
_STATE: ContextVar[str] = ContextVar("figure_state", default="")


@contextlib.contextmanager
def stamped(state: str) -> Iterator[None]:
    """Figures saved inside the block say ``state`` (``"partial: 240 of 300 episodes"``) as
    the last line of their title; ``""`` says nothing."""
    token = _STATE.set(state)
    try:
        yield
    finally:
        _STATE.reset(token)


def save(figure: Figure, path: Path) -> Path:
    """Write ``figure`` as ``path`` (PNG) and beside it as PDF and SVG; return ``path``."""
    path = Path(path)
    state = _STATE.get()
    if state:
        title = figure._suptitle.get_text() if figure._suptitle is not None else ""
        suptitle(figure, f"{title}\n[{state}]" if title else f"[{state}]")
    for fmt in FORMATS:
        figure.savefig(path.with_suffix(f".{fmt}"), dpi=DPI)
    return path


def episodes_note(frame: pd.DataFrame, column: str = "n") -> str:
    """``n = 10 episodes per cell`` (or ``n = 8-10 ...``) from a table's episode counts."""
    if column not in frame.columns or frame.empty:
        return ""
    low, high = int(frame[column].min()), int(frame[column].max())
    return f"n = {low} episodes per cell" if low == high else f"n = {low}-{high} episodes per cell"


def figure_legend(figure: Figure, title: str | None = None, ncols: int = 2) -> None:
    """One legend for the whole figure, below it (never over a panel or an axis label), each
    label once however many panels drew it."""
    handles: dict[str, object] = {}
    for axes in figure.axes:
        for handle, label in zip(*axes.get_legend_handles_labels(), strict=True):
            handles.setdefault(label, handle)
    if handles:
        size = STYLE["legend.fontsize"]
        width = max(
            16, int(figure.get_figwidth() * 72 / (size * 0.56) / min(ncols, len(handles))) - 8
        )
        figure.legend(
            list(handles.values()),
            [textwrap.fill(label, width, break_long_words=False) for label in handles],
            title=title,
            loc="outside lower center",
            ncols=min(ncols, len(handles)),
            frameon=False,
        )


def panel_grid(count: int, columns: int = 3) -> tuple[int, int]:
    """Rows and columns of ``count`` panels (facets wrap: no panel is dropped)."""
    columns = max(1, min(columns, count))
    return (count + columns - 1) // columns, columns


def texts(figure: Figure) -> list[Text]:
    """Every text the figure draws: titles, axis labels, the tick labels in view, legends,
    annotations, colour-bar labels."""
    found: list[Text] = list(figure.texts)
    if figure._suptitle is not None:
        found.append(figure._suptitle)
    for legend in figure.legends:
        found += [*legend.get_texts(), legend.get_title()]
    for axes in figure.axes:
        found += [axes.title, axes._left_title, axes._right_title]
        found += [axes.xaxis.label, axes.yaxis.label]
        for axis in (axes.xaxis, axes.yaxis):
            low, high = sorted(axis.get_view_interval())
            slack = 1e-9 * max(1.0, abs(high - low))
            found += [  # a tick outside the view is never drawn
                label
                for tick in axis.get_major_ticks()
                if low - slack <= tick.get_loc() <= high + slack
                for label in (tick.label1, tick.label2)
            ]
        found += list(axes.texts)
        legend = axes.get_legend()
        if legend is not None:
            found += [*legend.get_texts(), legend.get_title()]
    unique = {id(t): t for t in found}  # the suptitle is also one of figure.texts
    return [t for t in unique.values() if t.get_visible() and t.get_text().strip()]


def layout_problems(figure: Figure, tolerance: float = 0.5) -> list[str]:
    """Texts that leave the figure, and pairs of texts that overlap (in display pixels, with
    ``tolerance`` for touching edges), after the figure's layout has run."""
    canvas = FigureCanvasAgg(figure)  # the renderer the PNG is drawn with
    canvas.draw()
    renderer = canvas.get_renderer()
    bounds = figure.bbox
    boxes = [(t, t.get_window_extent(renderer)) for t in texts(figure)]
    problems = []
    for text, box in boxes:
        if (
            box.x0 < bounds.x0 - tolerance
            or box.y0 < bounds.y0 - tolerance
            or box.x1 > bounds.x1 + tolerance
            or box.y1 > bounds.y1 + tolerance
        ):
            problems.append(f"{text.get_text()!r} leaves the figure")
    for (a, box_a), (b, box_b) in itertools.combinations(boxes, 2):
        width = min(box_a.x1, box_b.x1) - max(box_a.x0, box_b.x0)
        height = min(box_a.y1, box_b.y1) - max(box_a.y0, box_b.y0)
        if width > tolerance and height > tolerance:
            problems.append(f"{a.get_text()!r} overlaps {b.get_text()!r}")
    return problems
