"""``FittingTable``: the commands' tables fit a pipe's 80 columns without cutting a word."""

from __future__ import annotations

import io

from rich.console import Console

from qdash.evaluation.report import HEADERS as EVAL_HEADERS
from qdash.tables import FittingTable


def _render(table: FittingTable, width: int) -> list[str]:
    out = io.StringIO()
    Console(file=out, width=width).print(table)  # a file, not a terminal: as when piped
    return out.getvalue().splitlines()


def test_a_wide_table_fits_80_columns_with_every_word_whole() -> None:
    table = FittingTable(title="Copilot evaluation: scripted mode")
    for header in EVAL_HEADERS:  # the widest table: qdash eval's
        table.add_column(
            header, no_wrap=header == "category", justify="left" if header == "category" else "right"
        )
    table.add_row("chip_overview_stats", "12", "12", "100 %", "100 %", "0", "12345", "2.5", "13.1")
    lines = _render(table, 80)
    assert all(len(line) <= 80 for line in lines) and "…" not in "\n".join(lines)
    words = " ".join(lines).split()
    assert {"questions", "attempts", "pass@1", "tool", "calls", "chip_overview_stats", "12345"} <= set(words)


def test_free_text_wraps_between_words_and_the_table_renders_again_at_another_width() -> None:
    table = FittingTable("task", "qid", "decision", "guard", "reason")
    reason = "readout_fidelity = 0.81 is below the bad threshold 0.85 and the fit residuals are structured"
    table.add_row("CheckReadoutFidelity", "12", "REVIEW", "below_threshold", reason)
    narrow = _render(table, 80)
    assert all(len(line) <= 80 for line in narrow) and len(narrow) > 3
    assert narrow[2].split()[:4] == ["CheckReadoutFidelity", "12", "REVIEW", "below_threshold"]
    assert (
        " ".join(" ".join(line.split()[4:] if i == 0 else line.split()) for i, line in enumerate(narrow[2:]))
        == reason
    )
    wide = _render(table, 200)
    assert len(wide) == 3 and wide[2].rstrip().endswith("structured")  # one row: nothing kept from 80
