"""Tables of the ``qdash`` commands that fit the terminal, and a pipe's 80 columns.

Why: rich fits a table that is too wide by cutting headers and cells with "…" (``que… att…``) and
by squeezing the first column (the ids and names a reader looks for) as much as the free text. Here
the widest columns give way first, never below their longest word (header or cell, up to
``MAX_WORD``), so text wraps between words; columns are separated by one space, no vertical rules.
When even the words cannot fit, the longest words of the wrapping columns fold, the widest first;
``no_wrap`` columns (ids a reader copies) keep theirs. Only when those alone are too wide does rich's
own shrinking (cutting every column) take over.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import typer
from rich import box
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.table import Column, Table
from rich.text import Text

MAX_WORD = 28
"""A word longer than this (a 32-character id) may fold rather than widen its column."""


class FittingTable(Table):
    """A ``rich`` table that keeps words whole and drops the vertical rules (see the module)."""

    def __init__(self, *headers: str | Column, **options: Any) -> None:
        super().__init__(*headers, box=box.SIMPLE_HEAD, padding=0, show_edge=False, **options)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for column in self.columns:
            column.overflow = "fold"
        with self._fixed(_fit(self.columns, console, options)):
            yield from super().__rich_console__(console, options)

    @contextmanager
    def _fixed(self, widths: list[int] | None) -> Iterator[None]:
        """Columns of these widths while rendering (the table may be printed again at another width)."""
        if widths is None:
            yield
            return
        for column, width in zip(self.columns, widths, strict=True):
            column.width = width
        try:
            yield
        finally:
            for column in self.columns:
                column.width = None


def _fit(columns: list[Column], console: Console, options: ConsoleOptions) -> list[int] | None:
    """Column widths within the console's width, each at least its longest word where the words fit;
    ``None`` when the natural widths fit already, or when the ``no_wrap`` columns alone do not."""
    budget = options.max_width - (len(columns) - 1)  # one space between columns
    natural = [_natural(column, console, options) for column in columns]
    if sum(natural) <= budget:
        return None
    floors = [
        width if column.no_wrap else min(width, _longest_word(column))
        for column, width in zip(columns, natural, strict=True)
    ]
    while sum(floors) > budget:  # the longest words fold: the widest floor first, rightmost on a tie
        foldable = [i for i, column in enumerate(columns) if not column.no_wrap and floors[i] > 1]
        if not foldable:
            return None
        floors[max(foldable, key=lambda i: (floors[i], i))] -= 1
    widths = list(natural)
    while sum(widths) > budget:
        shrinkable = [i for i, width in enumerate(widths) if width > floors[i]]
        if not shrinkable:
            return None
        widths[max(shrinkable, key=lambda i: widths[i])] -= 1
    return widths


def _cells(column: Column) -> Iterator[RenderableType]:
    for cell in (column.header, *column.cells):
        yield Text.from_markup(cell) if isinstance(cell, str) else cell


def _natural(column: Column, console: Console, options: ConsoleOptions) -> int:
    return max(Measurement.get(console, options, cell).maximum for cell in _cells(column))


def _longest_word(column: Column) -> int:
    plain = (cell.plain if isinstance(cell, Text) else "" for cell in _cells(column))
    return min(MAX_WORD, max((len(word) for text in plain for word in text.split()), default=1))


def print_records(
    records: list[dict[str, Any]],
    columns: Sequence[str],
    cells: Callable[[dict[str, Any]], Sequence[str]],
    *,
    as_json: bool,
    empty: str,
) -> None:
    """What a ``list`` command prints: with ``--json`` every field, else a table of ``cells`` per
    record as plain text (no rich markup: stored text may hold brackets), or ``empty``."""
    if as_json:
        typer.echo(json.dumps(records, indent=2, ensure_ascii=False, default=str))
        return
    console = Console()
    if not records:
        console.print(empty)
        return
    table = FittingTable(*columns)
    for record in records:
        table.add_row(*(Text(cell) for cell in cells(record)))
    console.print(table)
