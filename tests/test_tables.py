"""``FittingTable``: the commands' tables fit a pipe's 80 columns without cutting a word."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console
from typer.testing import CliRunner

from qdash.actions import audit
from qdash.actions.approvals import Scope
from qdash.actions.decisions import decide
from qdash.cli import app
from qdash.db import close_database, open_database
from qdash.evaluation.questions import load_questions
from qdash.evaluation.report import HEADERS as EVAL_HEADERS
from qdash.repositories.task_results import TASK_RESULTS
from qdash.settings import DatabaseSettings
from qdash.tables import FittingTable
from tests.actions.helpers import actions_settings, approval_of, call_tool
from tests.served import cli_env, one_chip_lab, run_qdash, seed_lab


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


def _fits(output: str, width: int = 80) -> list[str]:
    lines = output.splitlines()
    assert lines and all(len(line) <= width for line in lines), [len(line) for line in lines]
    assert "…" not in output
    return lines


def test_eval_list_fits_80_columns_with_every_question_id_whole() -> None:
    result = CliRunner().invoke(app, ["eval", "--list"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    words = set(" ".join(_fits(result.stdout)).split())
    assert {question.id for question in load_questions()} <= words


async def test_actions_list_fits_80_columns_on_the_demo_lab(tmp_path: Path) -> None:
    """The demo flow's records (an exclusion, then its undo), listed by ``qdash actions list`` piped."""
    data_dir = tmp_path / "data"
    seed_lab(data_dir, one_chip_lab(days=2))
    db = open_database(DatabaseSettings(data_dir=data_dir, embedded_warn_documents=10**9))
    try:
        run = db[TASK_RESULTS].find_one({"project_id": "proj-demo", "name": "CheckT1", "qid": "16"})
        assert run is not None
        settings, scope = actions_settings(data_dir), Scope("proj-demo", "alice", "s1")
        reason = "Excluded on request in chat (latest CheckT1 of Q16)"
        for tool, args in (("exclude_task_result", {"task_id": run["task_id"], "reason": reason}),
                           ("undo_action", {"audit_id": None})):  # fmt: skip
            output = await call_tool(db, settings, tool, args, project="proj-demo", user="alice")
            outcome = decide(db, settings, scope, approval_of(output)["id"], True).outcome
            assert outcome is not None and outcome.ok, outcome
        ids = [str(record["_id"]) for record in audit.records(db, "proj-demo")]
    finally:
        close_database(db)
    listed = run_qdash({**cli_env(data_dir), "COLUMNS": "80"}, "actions", "list")
    assert listed.returncode == 0, listed.stderr
    words = set(" ".join(_fits(listed.stdout)).split())
    assert len(ids) == 2 and set(ids) <= words
    assert {"Exclude", "CheckT1", "Q16", "Undo:", "done", "(undone)", "alice"} <= words
