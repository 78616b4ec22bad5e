"""Reports of one evaluation run: a rich table for the terminal, markdown and JSON files.

The JSON holds every attempt (for diffs between runs and for CI artefacts); the markdown is what
an operator pastes into a note: per-category pass@1 / pass^k with tokens, tool calls and time,
then every question that failed with the reason.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from qdash.evaluation.results import CategoryScore, QuestionResult, scores
from qdash.tables import FittingTable

HEADERS = (
    "category",
    "questions",
    "attempts",
    "pass@1",
    "pass^k",
    "errors",
    "tokens",
    "tool calls",
    "s",
)
"""``tokens``: median per attempt (tool-output tokens in visible mode, model-reported in the others);
``tool calls`` and ``s``: mean per attempt."""


def _cells(row: CategoryScore) -> list[str]:
    return [
        row.category,
        str(row.questions),
        str(row.attempts),
        f"{100 * row.pass_at_1:.0f} %",
        f"{100 * row.pass_hat_k:.0f} %",
        str(row.errors),
        f"{row.median_tokens:.0f}",
        f"{row.mean_tool_calls:.1f}",
        f"{row.mean_seconds:.1f}",
    ]


def rich_table(results: list[QuestionResult], title: str) -> FittingTable:
    table = FittingTable(title=title)
    for header in HEADERS:
        if header == "category":
            table.add_column(header, no_wrap=True)
        else:
            table.add_column(header, justify="right")
    rows = scores(results)
    for row in rows:
        table.add_row(*_cells(row), style="bold" if row.category == "all" else None)
    return table


def markdown(results: list[QuestionResult], meta: dict[str, Any]) -> str:
    """The report as markdown: run facts, the category table, then the failures."""
    lines = [f"# Copilot evaluation: {meta.get('mode')} mode", ""]
    lines += [f"- {key}: {value}" for key, value in meta.items()]
    lines += ["", "| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    lines += ["| " + " | ".join(_cells(row)) + " |" for row in scores(results)]
    failed = [r for r in results if not r.passed]
    if failed:
        lines += [
            "",
            "## Failed attempts",
            "",
            "| question | attempt | expected | why |",
            "|---|---|---|---|",
        ]
        for r in failed:
            why = (r.error or r.detail).replace("|", "\\|").replace("\n", " ")[:200]
            lines.append(f"| {r.id} | {r.attempt} | {r.truth.replace('|', '/')[:80]} | {why} |")
    return "\n".join(lines) + "\n"


def write_reports(results: list[QuestionResult], meta: dict[str, Any], out_dir: Path) -> tuple[Path, Path]:
    """``report.md`` and ``report.json`` in ``out_dir`` (created)."""
    payload = {
        "meta": meta,
        "scores": [row.model_dump() for row in scores(results)],
        "results": [r.model_dump() for r in results],
    }
    return write_report_files(out_dir, markdown(results, meta), payload)


def write_report_files(out_dir: Path, text: str, payload: dict[str, Any]) -> tuple[Path, Path]:
    """``report.md`` (``text``) and ``report.json`` (``payload``) in ``out_dir`` (created): the two
    files every evaluation suite leaves for an operator and for a later comparison."""
    out_dir.mkdir(parents=True, exist_ok=True)
    md_path, json_path = out_dir / "report.md", out_dir / "report.json"
    md_path.write_text(text, encoding="utf-8")
    json_path.write_text(json.dumps(payload, indent=1, ensure_ascii=False), encoding="utf-8")
    return md_path, json_path
