"""``qdash eval --from-feedback DIR``: one draft eval case per thumbs-down answer.

A draft is a ``questions_*.yaml`` file in the shape of ``qdash/evaluation/questions.yaml``: the
question as asked, analysis mode with its target when the chat was about one task result, the tools
called as the plan, and the answer the user rejected as a comment. What only a person knows (the
category, the oracle function with its arguments and the grader) is left as ``TODO``; the question
loader refuses a file that still holds one (``DraftQuestionError``), so a draft is never graded.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from qdash.evaluation.questions import DRAFT_MARK

_CONTEXT_KEYS = {
    # AnalysisTarget field: the keys the upstream dashboard (camelCase) or our clients use
    "task_name": ("taskName", "task_name"),
    "qid": ("qid",),
    "execution_id": ("executionId", "execution_id"),
    "task_id": ("taskId", "task_id"),
    "chip_id": ("chipId", "chip_id"),
}


def draft_id(answer: dict[str, Any]) -> str:
    """``fb-<session>-<index>``: stable, so writing the same feedback again overwrites its draft."""
    session = re.sub(r"[^a-z0-9]+", "-", str(answer["session_id"]).lower()).strip("-")[:60] or "session"
    return f"fb-{session}-{answer['index']}"


def _analysis_target(context: dict[str, Any] | None) -> dict[str, str] | None:
    if not context:
        return None
    target = {}
    for field, keys in _CONTEXT_KEYS.items():
        value = next((context[key] for key in keys if context.get(key)), None)
        if value is None:
            return None
        target[field] = str(value)
    return target


def draft_case(answer: dict[str, Any]) -> dict[str, Any]:
    """The question entry; ``TODO`` where the expected answer goes."""
    case: dict[str, Any] = {"id": draft_id(answer), "category": DRAFT_MARK, "text": answer["question"]}
    target = _analysis_target(answer.get("context"))
    if target is not None:
        case["mode"] = "analysis"
        case["analysis"] = target
    case["truth"] = {"fn": DRAFT_MARK}
    case["grader"] = {"type": DRAFT_MARK}
    case["plan"] = [
        {"tool": step["tool"], "args": step["args"] if isinstance(step.get("args"), dict) else {}}
        for step in answer.get("tools") or []
    ]
    return case


def _comment(text: str) -> list[str]:
    return [f"#   {line}".rstrip() for line in (text.splitlines() or [""])]


def draft_text(answer: dict[str, Any]) -> str:
    """The draft file: what happened as comments, then the case."""
    context = answer.get("context") or {}
    chip = context.get("chipId") or context.get("chip_id") or "(not recorded)"
    tools = answer.get("tools")
    lines = [
        "# DRAFT eval case from a thumbs-down answer (qdash eval --from-feedback).",
        f"# Replace every {DRAFT_MARK}: category, truth (an oracle function of",
        "# qdash/evaluation/oracle and its arguments) and grader; then move this file beside",
        "# questions.yaml. `qdash eval` refuses it while a TODO is left.",
        f"# project: {answer['project_id']}   chip: {chip}   user: {answer['username']}",
        f"# session: {answer['session_id']} (answer #{answer['index']}, rated {answer['rated_at']})",
        "# tools called: "
        + ("not stored (the dashboard kept no trace)" if tools is None else f"{len(tools)} (the plan below)"),
        "# the answer given (rejected):",
        *_comment(answer["answer"]),
    ]
    body = yaml.safe_dump({"questions": [draft_case(answer)]}, sort_keys=False, allow_unicode=True, width=100)
    return "\n".join(lines) + "\n" + body


def write_drafts(rated: list[dict[str, Any]], directory: Path) -> list[Path]:
    """One ``questions_<draft id>.yaml`` per answer in ``directory`` (created); the paths written."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for answer in rated:
        path = directory / f"questions_{draft_id(answer)}.yaml"
        path.write_text(draft_text(answer), encoding="utf-8")
        written.append(path)
    return written
