"""Reports of one review evaluation: a rich table, ``report.md`` and ``report.json``.

Like the chat eval's: the JSON holds every result (for diffs between models); the markdown has the
run facts, the per-kind table, then every known-bad result that was missed and every false alarm,
with the decision and the reviewer's reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from qdash.evaluation.report import write_report_files
from qdash.evaluation.reviews.grades import KindRow, ReviewResult, ReviewScore
from qdash.tables import FittingTable

HEADERS = ("kind", "results", "flagged", "share flagged", "errors", "evidence")
"""``share flagged`` is the recall of a known-bad kind and the false-alarm rate of ``healthy``;
``evidence`` (``visible``) counts the known-bad results a model could decide from its prompt."""
MAX_LISTED = 200


def _cells(row: KindRow) -> list[str]:
    graded = row.results - row.errors
    share = f"{100 * row.flagged / graded:.0f} %" if graded else "-"
    evidence = "-" if row.evidence is None else str(row.evidence)
    return [row.kind, str(row.results), str(row.flagged), share, str(row.errors), evidence]


def headline(score: ReviewScore) -> list[str]:
    """The run's numbers in a few lines (terminal and markdown)."""
    lines = [
        f"needs a human (FAIL/REVIEW): precision {score.precision:.3f}, recall {score.recall:.3f}",
        f"false alarms on healthy results: {score.false_alarms}/{score.healthy} "
        f"({score.false_alarm_rate:.3f})",
        f"tokens per model review: mean {score.mean_tokens:.0f}, max {score.max_tokens} "
        f"({score.model_reviews} model reviews)",
    ]
    if score.evidence_share is not None:
        lines.append(
            f"known-bad results answerable from what the model sees: {100 * score.evidence_share:.0f} %"
        )
    return lines


def rich_table(score: ReviewScore, title: str) -> FittingTable:
    table = FittingTable(title=title, caption="\n".join(headline(score)))
    for header in HEADERS:
        table.add_column(header, justify="left" if header == "kind" else "right", no_wrap=header == "kind")
    for row in score.rows:
        table.add_row(*_cells(row), style="bold" if row.kind == "all" else None)
    return table


def _listing(title: str, results: list[ReviewResult]) -> list[str]:
    if not results:
        return []
    lines = [
        "",
        f"## {title} ({len(results)})",
        "",
        "| task_id | task | qid | execution | kind | decision | why |",
    ]
    lines.append("|---|---|---|---|---|---|---|")
    for r in results[:MAX_LISTED]:
        why = (r.error or r.detail).replace("|", "\\|").replace("\n", " ")[:200]
        decision = r.decision or ("error" if r.error else "no guard fired")
        lines.append(
            f"| {r.task_id} | {r.name} | {r.qid} | {r.execution_id} | {r.kind} | {decision} | {why} |"
        )
    if len(results) > MAX_LISTED:
        lines.append(f"| … {len(results) - MAX_LISTED} more in report.json | | | | | | |")
    return lines


def markdown(results: list[ReviewResult], meta: dict[str, Any]) -> str:
    """Run facts, headline, the per-kind table, then the missed results and the false alarms."""
    score = ReviewScore.of(results)
    lines = [f"# Review evaluation: {meta.get('mode')} mode", ""]
    lines += [f"- {key}: {value}" for key, value in meta.items()]
    lines += ["", *[f"{line}  " for line in headline(score)], ""]
    lines += ["| " + " | ".join(HEADERS) + " |", "|" + "---|" * len(HEADERS)]
    lines += ["| " + " | ".join(_cells(row)) + " |" for row in score.rows]
    lines += _listing("Missed known-bad results", [r for r in results if r.missed])
    lines += _listing("False alarms", [r for r in results if not r.bad and r.flagged and r.error is None])
    lines += _listing("Errors", [r for r in results if r.error is not None])
    return "\n".join(lines) + "\n"


def write_reports(results: list[ReviewResult], meta: dict[str, Any], out_dir: Path) -> tuple[Path, Path]:
    """``report.md`` and ``report.json`` in ``out_dir`` (created)."""
    payload = {
        "meta": meta,
        "score": ReviewScore.of(results).model_dump(),
        "results": [r.model_dump() for r in results],
    }
    return write_report_files(out_dir, markdown(results, meta), payload)
