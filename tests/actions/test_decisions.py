"""A proposal, then a decision, on the upstream-shaped lab: the model's call only proposes; the
approved write sets exactly upstream's fields and leaves an audit record; every refused decision
changes nothing and says why; two racing decisions write once; an undo restores the document.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from qdash.actions import audit
from qdash.actions.approvals import APPROVALS, STALE, ApprovalError, Scope
from qdash.actions.decisions import decide
from qdash.copilot.tools.registry import default_registry
from qdash.engine.tool import ToolOutput
from qdash.repositories.task_results import TASK_RESULTS
from tests.actions.helpers import ON, actions_settings, approval_of, call_tool
from tests.support.upstream_lab import PROJECT_ID, UpstreamLab, task_id

OLD_T1 = task_id("20260210-000", "CheckT1", "2")  # older upstream shape: no excluded fields at all
NEW_T1 = task_id("20260227-000", "CheckT1", "4")
BOB = Scope(PROJECT_ID, "bob", "s1")  # an editor of the lab's project


def _doc(lab: UpstreamLab, tid: str) -> dict[str, Any]:
    doc = lab.db[TASK_RESULTS].find_one({"project_id": PROJECT_ID, "task_id": tid})
    assert doc is not None
    return doc


def _exclude(tid: str) -> dict[str, Any]:
    return {"task_id": tid, "reason": "TLS spike"}


async def _call(
    lab: UpstreamLab, tmp_path: Path, tool: str, args: dict[str, Any], user: str = "bob"
) -> ToolOutput:
    """``user`` calls ``tool`` through the tool pipeline, as a chat turn does."""
    return await call_tool(lab.db, actions_settings(tmp_path), tool, args, project=PROJECT_ID, user=user)


async def _propose(
    lab: UpstreamLab, tmp_path: Path, tool: str = "exclude_task_result", args: dict[str, Any] | None = None
) -> dict[str, Any]:
    """bob's proposal (by default: excluding ``NEW_T1``)."""
    return approval_of(await _call(lab, tmp_path, tool, _exclude(NEW_T1) if args is None else args))


async def _approved(lab: UpstreamLab, tmp_path: Path, args: dict[str, Any] | None = None) -> dict[str, Any]:
    """bob's exclusion, approved by bob."""
    approval = await _propose(lab, tmp_path, args=args)
    decide(lab.db, ON, BOB, approval["id"], True)
    return approval


async def test_approve_writes_upstream_fields_and_the_audit(
    upstream_lab_db: UpstreamLab, tmp_path: Path
) -> None:
    lab = upstream_lab_db
    before = _doc(lab, NEW_T1)
    approval = await _propose(lab, tmp_path)
    assert approval["tool"] == "exclude_task_result"
    assert approval["args"] == {"task_id": NEW_T1, "reason": "TLS spike"}
    assert approval["label"].startswith("Exclude CheckT1 on Q4 (64Qv1, run 2026-02-27")
    assert _doc(lab, NEW_T1) == before  # proposing wrote nothing to the lab's document

    decided = decide(lab.db, ON, BOB, approval["id"], True)
    assert decided.outcome is not None and decided.outcome.ok
    after = _doc(lab, NEW_T1)
    changed = {k for k in after.keys() | before.keys() if after.get(k) != before.get(k)}
    assert changed == {"excluded", "excluded_reason", "excluded_by", "excluded_at"}
    assert after["excluded_by_user_id"] is None  # written too; this lab's user documents carry no user_id
    assert after["excluded"] is True and after["excluded_reason"] == "TLS spike"
    assert after["excluded_by"] == "bob" and isinstance(after["excluded_at"], datetime)
    (record,) = audit.records(lab.db, PROJECT_ID)
    assert record["state"] == "done" and record["_id"] == approval["id"]
    assert record["proposed_by"] == record["approved_by"] == "bob"
    assert record["model"] == "gpt-test" and record["session_id"] == "s1"
    assert record["before"]["excluded"] is False and record["after"]["excluded"] is True
    assert audit.holds(after, record["after"], record["after_missing"])


async def test_decline_writes_nothing(upstream_lab_db: UpstreamLab, tmp_path: Path) -> None:
    lab = upstream_lab_db
    before = _doc(lab, NEW_T1)
    approval = await _propose(lab, tmp_path)
    decided = decide(lab.db, ON, BOB, approval["id"], False)
    assert decided.outcome is None and decided.approval["status"] == "declined"
    assert _doc(lab, NEW_T1) == before
    assert audit.records(lab.db, PROJECT_ID) == []


async def test_replay_and_expiry_are_refused_as_no_longer_pending(
    upstream_lab_db: UpstreamLab, tmp_path: Path
) -> None:
    lab = upstream_lab_db
    approval = await _approved(lab, tmp_path)
    with pytest.raises(ApprovalError) as replay:
        decide(lab.db, ON, BOB, approval["id"], True)
    assert replay.value.status == 400 and replay.value.detail.startswith(STALE)
    assert "already approved" in replay.value.detail
    with pytest.raises(ApprovalError) as unknown:
        decide(lab.db, ON, BOB, "apv_unknown", True)
    assert (unknown.value.status, unknown.value.detail) == (400, STALE)

    second = await _propose(lab, tmp_path, args=_exclude(OLD_T1))
    past = datetime.now(UTC) - timedelta(seconds=1)
    lab.db[APPROVALS].update_one({"_id": second["id"]}, {"$set": {"expires_at": past}})
    with pytest.raises(ApprovalError) as expired:
        decide(lab.db, ON, BOB, second["id"], True)
    assert expired.value.status == 400 and "expired" in expired.value.detail
    assert "excluded" not in _doc(lab, OLD_T1)
    assert len(audit.records(lab.db, PROJECT_ID)) == 1  # the first decision only


@pytest.mark.parametrize(
    ("scope", "status", "why"),
    [
        (Scope(PROJECT_ID, "alice", "s1"), 403, "another user"),
        (Scope("other-project", "bob", "s1"), 403, "another project"),
        (Scope(PROJECT_ID, "bob", "s2"), 400, "another chat session"),
    ],
)
async def test_someone_elses_approval_changes_nothing(
    upstream_lab_db: UpstreamLab, tmp_path: Path, scope: Scope, status: int, why: str
) -> None:
    lab = upstream_lab_db
    lab.db["project_membership"].insert_one(  # bob edits another project too
        {"project_id": "other-project", "username": "bob", "role": "editor", "status": "active"}
    )
    approval = await _propose(lab, tmp_path)
    with pytest.raises(ApprovalError) as refused:
        decide(lab.db, ON, scope, approval["id"], True)
    assert refused.value.status == status and why in refused.value.detail
    assert lab.db[APPROVALS].find_one({"_id": approval["id"]})["status"] == "pending"  # type: ignore[index]
    assert decide(lab.db, ON, BOB, approval["id"], True).outcome is not None  # still the owner's to decide


async def test_viewer_can_neither_propose_nor_approve(upstream_lab_db: UpstreamLab, tmp_path: Path) -> None:
    lab = upstream_lab_db
    lab.db["project_membership"].insert_one(
        {"project_id": PROJECT_ID, "username": "erin", "role": "viewer", "status": "active"}
    )
    out = await _call(lab, tmp_path, "exclude_task_result", _exclude(NEW_T1), "erin")
    assert out.is_error and not out.ends_turn
    assert "editor role or above; erin is viewer" in out.model_text
    approval = await _propose(lab, tmp_path)  # bob's proposal; bob is then demoted to viewer
    lab.db["project_membership"].update_one(
        {"project_id": PROJECT_ID, "username": "bob"}, {"$set": {"role": "viewer"}}
    )
    with pytest.raises(ApprovalError) as refused:
        decide(lab.db, ON, BOB, approval["id"], True)
    assert refused.value.status == 403 and "bob is viewer" in refused.value.detail
    assert _doc(lab, NEW_T1)["excluded"] is False


async def test_two_racing_decisions_write_once(upstream_lab_db: UpstreamLab, tmp_path: Path) -> None:
    lab = upstream_lab_db
    approval = await _propose(lab, tmp_path)
    barrier = threading.Barrier(4)
    results: list[str] = []

    def racer() -> None:
        barrier.wait()
        try:
            decide(lab.db, ON, BOB, approval["id"], True)
            results.append("won")
        except ApprovalError as exc:
            results.append(exc.detail)

    threads = [threading.Thread(target=racer) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results.count("won") == 1 and all(r.startswith(STALE) for r in results if r != "won")
    assert len(audit.records(lab.db, PROJECT_ID)) == 1


async def test_undo_restores_the_older_shape_exactly(upstream_lab_db: UpstreamLab, tmp_path: Path) -> None:
    lab = upstream_lab_db
    original = _doc(lab, OLD_T1)
    assert "excluded" not in original  # upstream wrote it before the exclusion feature
    approval = await _approved(lab, tmp_path, _exclude(OLD_T1))
    assert _doc(lab, OLD_T1)["excluded"] is True

    undo = await _propose(lab, tmp_path, "undo_action", {})
    assert undo["label"] == f"Undo: {approval['label']}" and undo["args"] == {"audit_id": approval["id"]}
    assert _doc(lab, OLD_T1)["excluded"] is True  # the undo is a proposal too
    decide(lab.db, ON, BOB, undo["id"], True)
    assert _doc(lab, OLD_T1) == original  # the fields it lacked are gone again
    records = {r["_id"]: r for r in audit.records(lab.db, PROJECT_ID)}
    assert records[approval["id"]]["undone_by"] == undo["id"]
    assert records[undo["id"]]["undo_of"] == approval["id"] and records[undo["id"]]["state"] == "done"
    again = await _call(lab, tmp_path, "undo_action", {"audit_id": approval["id"]})
    assert again.is_error and "already undone" in again.model_text


async def test_undo_refuses_when_the_result_changed_since(
    upstream_lab_db: UpstreamLab, tmp_path: Path
) -> None:
    lab = upstream_lab_db
    await _approved(lab, tmp_path)
    undo = await _propose(lab, tmp_path, "undo_action", {})
    # Someone toggles it on upstream's dashboard in between: the undo must not overwrite that.
    lab.db[TASK_RESULTS].update_one(
        {"project_id": PROJECT_ID, "task_id": NEW_T1}, {"$set": {"excluded": False, "excluded_by": "alice"}}
    )
    decided = decide(lab.db, ON, BOB, undo["id"], True)
    assert decided.outcome is not None and not decided.outcome.ok
    assert "changed since this was proposed" in decided.outcome.message
    assert _doc(lab, NEW_T1)["excluded_by"] == "alice"
    assert audit.record(lab.db, PROJECT_ID, undo["id"])["state"] == "failed"  # type: ignore[index]


async def test_label_an_ai_review_then_undo(upstream_lab_db: UpstreamLab, tmp_path: Path) -> None:
    """A person corrects the AI's verdict: ``human_label`` on our newest review of that result only."""
    lab = upstream_lab_db
    older = {
        "_id": "rev-old",
        "project_id": PROJECT_ID,
        "task_id": NEW_T1,
        "decision": "PASS",
        "label": "CORRECT",
    }
    newer = {
        "_id": "rev-new",
        "project_id": PROJECT_ID,
        "task_id": NEW_T1,
        "decision": "REVIEW",
        "label": "SUSPICIOUS",
    }
    lab.db["copilot_review"].insert_many(
        [
            {**older, "created_at": datetime(2026, 3, 1, tzinfo=UTC)},
            {**newer, "created_at": datetime(2026, 3, 2, tzinfo=UTC)},
        ]
    )
    result_before = _doc(lab, NEW_T1)
    args = {
        "task_id": NEW_T1,
        "decision": "FAIL",
        "label": "ANOMALY",
        "comment": "TLS dip, not a fit problem",
    }
    approval = await _propose(lab, tmp_path, "label_ai_review", args)
    assert "FAIL/ANOMALY (correcting REVIEW/SUSPICIOUS)" in approval["label"]
    decide(lab.db, ON, BOB, approval["id"], True)
    human = lab.db["copilot_review"].find_one({"_id": "rev-new"})["human_label"]  # type: ignore[index]
    assert (human["decision"], human["label"], human["by"]) == ("FAIL", "ANOMALY", "bob")
    assert "human_label" not in lab.db["copilot_review"].find_one({"_id": "rev-old"})  # type: ignore[operator]
    assert _doc(lab, NEW_T1) == result_before  # upstream's ai_review fields untouched

    undo = await _propose(lab, tmp_path, "undo_action", {})
    decide(lab.db, ON, BOB, undo["id"], True)
    assert "human_label" not in lab.db["copilot_review"].find_one({"_id": "rev-new"})  # type: ignore[operator]

    switched_off = default_registry(actions_settings(tmp_path, label_ai_review=False)).names
    assert "label_ai_review" not in switched_off and "exclude_task_result" in switched_off
    off = default_registry(actions_settings(tmp_path, enabled=False)).names
    assert not set(off) & {"exclude_task_result", "note_task_result", "label_ai_review", "undo_action"}


async def test_a_review_whose_job_was_undone_is_not_labelled(
    upstream_lab_db: UpstreamLab, tmp_path: Path
) -> None:
    """``label_ai_review`` labels the newest review still current: one taken back by ``qdash review
    undo`` (``undone_by``) is passed over."""
    lab = upstream_lab_db
    base = {"project_id": PROJECT_ID, "task_id": NEW_T1, "label": "CORRECT"}
    lab.db["copilot_review"].insert_many(
        [
            {**base, "_id": "rev-kept", "decision": "PASS", "created_at": datetime(2026, 3, 1, tzinfo=UTC)},
            {
                **base,
                "_id": "rev-undone",
                "decision": "REVIEW",
                "created_at": datetime(2026, 3, 2, tzinfo=UTC),
                "undone_by": "rvu_1",
            },
        ]
    )
    args = {"task_id": NEW_T1, "decision": "PASS", "label": "CORRECT"}
    approval = await _propose(lab, tmp_path, "label_ai_review", args)
    assert "(confirming)" in approval["label"]  # compared with rev-kept's PASS/CORRECT, not REVIEW
    decide(lab.db, ON, BOB, approval["id"], True)
    assert "human_label" in (lab.db["copilot_review"].find_one({"_id": "rev-kept"}) or {})
    assert "human_label" not in (lab.db["copilot_review"].find_one({"_id": "rev-undone"}) or {})
