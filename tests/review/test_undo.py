"""Review writes are recorded before they are made (``copilot_review_write``) and a job can be taken
back (``undo.py``): exactly the values before, never over a later change, once, by editors only."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from qdash.copilot.assistant import Assistant
from qdash.evaluation.fake_llm import FakeLLMServer, HttpError, turn
from qdash.models.common import utc_now
from qdash.review import REVIEWS, ReviewNotFoundError, ReviewStore
from qdash.review.jobs import JOBS, JobRunner, Selection
from qdash.review.lease import JobUndoneError, LeaseHeldError, acquire, claimable
from qdash.review.reviewer import Reviewer
from qdash.review.undo import UNDOS, UndoRefusedError, undo_job
from qdash.review.writes import WRITES, Held, WriteConflictError, compare_and_set, write

from .conftest import ReviewLab, review_settings, verdict_json

PROJECT = "proj-demo"  # alice owns it, carol is an editor, dave a viewer
FIELDS = ("ai_review", "ai_review_note")
UPSTREAMS_OWN = {
    "ai_review_note": {
        "content": "## AI review\n- Decision: `REVIEW`\n- Primary reason: upstream's own reviewer",
        "updated_by": "qdash-ai",
        "updated_at": datetime(2026, 11, 20, 9, 30, tzinfo=UTC),
    },
    "ai_review": {
        "status": "completed",
        "requested_at": datetime(2026, 11, 20, 9, 29, tzinfo=UTC),
        "requested_by": "erin",
        "review_run_id": "upstream-run-1",
        "trigger_type": "manual_single",
        "model_provider": "openai",
        "model_name": "gpt-4.1",
        "completed_at": datetime(2026, 11, 20, 9, 30, tzinfo=UTC),
        "error": "",
    },
}


@pytest.fixture
async def runner(review_lab: ReviewLab, fake_llm: FakeLLMServer, tmp_path: Path) -> Any:
    fake_llm.respond_with(lambda _request: verdict_json("PASS"))
    assistant = Assistant(review_lab.db, review_settings(fake_llm, tmp_path, multimodal=False))
    yield JobRunner(Reviewer(assistant), PROJECT)
    await assistant.aclose()


async def _job(runner: JobRunner, *task_ids: str, by: str = "alice", force: bool = False) -> str:
    job = runner.create(by, Selection(chip_id="64Qv3", task_ids=list(task_ids)), force=force)
    final = await runner.run(job["job_id"])
    assert final["status"] == "completed" and final["progress"]["done"] == len(task_ids), final
    return str(job["job_id"])


def _fields(review_lab: ReviewLab, task_id: str) -> dict[str, Any]:
    """The result's review fields and its user note, as stored now."""
    doc = review_lab.db["task_result_history"].find_one({"project_id": PROJECT, "task_id": task_id})
    assert doc is not None
    return {name: doc[name] for name in (*FIELDS, "user_note") if name in doc}


def _reviewed_upstream(review_lab: ReviewLab) -> dict[str, Any]:
    """A result upstream's own reviewer reviewed before ours."""
    result = review_lab.take(PROJECT, name="CheckT1", status="completed")
    query = {"project_id": PROJECT, "task_id": result["task_id"]}
    review_lab.db["task_result_history"].update_one(query, {"$set": UPSTREAMS_OWN})
    return result


def _listed(review_lab: ReviewLab, job_id: str) -> list[str]:
    docs = ReviewStore(review_lab.db, PROJECT).list({"job_id": job_id}, latest_only=False)
    return sorted(doc["task_id"] for doc in docs)


async def test_every_write_of_a_job_is_recorded_with_the_values_before(
    review_lab: ReviewLab, runner: JobRunner
) -> None:
    fresh = review_lab.take(PROJECT, name="CheckT1", status="completed")
    older = _reviewed_upstream(review_lab)
    job_id = await _job(runner, fresh["task_id"], older["task_id"], by="carol")
    records = {doc["task_id"]: doc for doc in review_lab.db[WRITES].find({"job_id": job_id})}
    assert set(records) == {fresh["task_id"], older["task_id"]}
    for task_id, record in records.items():
        assert (record["project_id"], record["kind"], record["requested_by"]) == (PROJECT, "review", "carol")
        assert (record["trigger"], record["state"], record["fields"]) == (
            "manual_chip_bulk",
            "done",
            [*FIELDS],
        )
        assert record["after"] == {name: _fields(review_lab, task_id)[name] for name in FIELDS}
        assert record["after"]["ai_review"]["review_run_id"] == job_id
        assert record["after_missing"] == [] and record["started_at"] <= record["finished_at"]
        assert record["review_id"].startswith(f"{PROJECT}:{task_id}:") and record["review_before"] is None
    assert records[fresh["task_id"]]["before"] == {}
    assert records[fresh["task_id"]]["before_missing"] == [*FIELDS]
    assert records[older["task_id"]]["before"] == UPSTREAMS_OWN
    assert records[older["task_id"]]["before_missing"] == []


async def test_undo_restores_exactly_what_each_result_held_before_the_job(
    review_lab: ReviewLab, runner: JobRunner
) -> None:
    fresh = review_lab.take(PROJECT, name="CheckT1", status="completed")
    older = _reviewed_upstream(review_lab)
    guarded = review_lab.take(PROJECT, status="failed")  # the guards FAIL it: no model request
    ids = [fresh["task_id"], older["task_id"], guarded["task_id"]]
    before = {task_id: _fields(review_lab, task_id) for task_id in ids}
    job_id = await _job(runner, *ids)
    assert _listed(review_lab, job_id) == sorted(ids)

    undo = undo_job(review_lab.db, PROJECT, job_id, "carol")
    assert sorted(undo["restored"]) == sorted(ids) and undo["skipped"] == [] and undo["changed"]
    assert undo["message"] == f"review job {job_id} undone: 3 result(s) restored to what they held before it"
    for task_id in ids:
        assert _fields(review_lab, task_id) == before[task_id]  # user_note untouched, fields gone or back
    assert "ai_review" not in _fields(review_lab, fresh["task_id"])
    assert _fields(review_lab, older["task_id"])["ai_review_note"] == UPSTREAMS_OWN["ai_review_note"]
    assert _listed(review_lab, job_id) == []
    for doc in review_lab.db[REVIEWS].find({"project_id": PROJECT, "job_id": job_id}):
        assert doc["undone_by"] == undo["undo_id"]  # kept, not current
    job = review_lab.db[JOBS].find_one({"_id": job_id})
    assert job is not None and job["status"] == "completed" and job["undo"]["by"] == "carol"
    restores = list(review_lab.db[WRITES].find({"undo_id": undo["undo_id"]}))
    assert {doc["task_id"] for doc in restores} == set(ids)
    assert all(doc["kind"] == "undo" and doc["state"] == "done" for doc in restores)
    stored = review_lab.db[UNDOS].find_one({"_id": undo["undo_id"]})
    assert stored is not None and (stored["by"], stored["state"], stored["job_id"]) == (
        "carol",
        "done",
        job_id,
    )

    again = await runner.run(runner.create("alice", Selection(chip_id="64Qv3", task_ids=ids))["job_id"])
    assert again["progress"]["reviewed"] == 3  # a review taken back is not "reviewed before"


async def test_a_result_changed_since_is_skipped_and_a_second_undo_changes_nothing(
    review_lab: ReviewLab, runner: JobRunner
) -> None:
    kept = review_lab.take(PROJECT, name="CheckT1", status="completed")
    edited = review_lab.take(PROJECT, name="CheckT1", status="completed")
    job_id = await _job(runner, kept["task_id"], edited["task_id"])
    by_hand = {"content": "**AI review**\n- Decision: `FAIL`", "updated_by": "dave", "updated_at": None}
    review_lab.db["task_result_history"].update_one(
        {"project_id": PROJECT, "task_id": edited["task_id"]}, {"$set": {"ai_review_note": by_hand}}
    )
    left = _fields(review_lab, edited["task_id"])

    undo = undo_job(review_lab.db, PROJECT, job_id, "alice")
    assert undo["restored"] == [kept["task_id"]]
    assert undo["skipped"] == [
        {
            "task_id": edited["task_id"],
            "task_name": "CheckT1",
            "qid": edited["qid"],
            "reason": "changed since the job wrote it, not by a review job (a person or upstream QDash)",
        }
    ]
    assert "1 result(s) restored to what they held before it, 1 skipped (changed since" in undo["message"]
    assert _fields(review_lab, edited["task_id"]) == left  # never overwritten
    assert "ai_review" not in _fields(review_lab, kept["task_id"])
    assert _listed(review_lab, job_id) == [edited["task_id"]]  # still what upstream shows

    now = {task_id: _fields(review_lab, task_id) for task_id in (kept["task_id"], edited["task_id"])}
    second = undo_job(review_lab.db, PROJECT, job_id, "carol")
    assert (second["restored"], second["skipped"], second["changed"]) == ([], [], False)
    assert second["message"].startswith(f"review job {job_id} was already undone by alice at ")
    assert second["message"].endswith(": nothing changed")
    assert {task_id: _fields(review_lab, task_id) for task_id in now} == now
    assert review_lab.db[UNDOS].count_documents({"job_id": job_id}) == 2  # both recorded


async def test_undoing_a_forced_job_brings_the_older_review_back(
    review_lab: ReviewLab, runner: JobRunner
) -> None:
    result = review_lab.take(PROJECT, name="CheckT1", status="completed")
    other = review_lab.take(PROJECT, name="CheckT1", status="completed")
    first = await _job(runner, result["task_id"], other["task_id"])
    after_first = _fields(review_lab, result["task_id"])
    [review_id] = [
        doc["_id"] for doc in review_lab.db[REVIEWS].find({"job_id": first, "task_id": result["task_id"]})
    ]
    forced = await _job(runner, result["task_id"], other["task_id"], force=True)
    record = review_lab.db[WRITES].find_one({"job_id": forced, "task_id": result["task_id"]})
    assert record is not None and record["review_before"]["job_id"] == first
    assert record["before"] == {name: after_first[name] for name in FIELDS}

    undo = undo_job(review_lab.db, PROJECT, forced, "alice")
    assert sorted(undo["restored"]) == sorted([result["task_id"], other["task_id"]])
    assert _fields(review_lab, result["task_id"]) == after_first
    review = review_lab.db[REVIEWS].find_one({"_id": review_id})
    assert review is not None and review["job_id"] == first and "undone_by" not in review
    assert _listed(review_lab, first) == sorted([result["task_id"], other["task_id"]])

    again = await _job(runner, other["task_id"], force=True)
    earlier = undo_job(review_lab.db, PROJECT, first, "alice")
    assert earlier["restored"] == [result["task_id"]]
    [skipped] = earlier["skipped"]
    assert skipped["task_id"] == other["task_id"]
    assert skipped["reason"].startswith(f"written again since: review of job {again} by alice at ")


async def test_a_failed_request_state_is_recorded_and_taken_back_with_the_review_after_it(
    review_lab: ReviewLab, runner: JobRunner, fake_llm: FakeLLMServer
) -> None:
    result = review_lab.take(PROJECT, name="CheckT1", status="completed")
    fake_llm.respond_with(lambda _request: turn(fault=HttpError(503)))
    job = runner.create("alice", Selection(chip_id="64Qv3", task_ids=[result["task_id"]]))
    assert (await runner.run(job["job_id"]))["progress"]["failed"] == 1
    record = review_lab.db[WRITES].find_one({"job_id": job["job_id"]})
    assert record is not None and (record["kind"], record["fields"]) == ("failed", ["ai_review"])
    assert record["after"]["ai_review"]["status"] == "failed" and record["before_missing"] == ["ai_review"]
    fake_llm.respond_with(lambda _request: verdict_json("PASS"))
    runner.cancel(job["job_id"])  # as after a Ctrl-C: resuming the job runs it again
    review_lab.db[JOBS].update_one({"_id": job["job_id"]}, {"$set": {"status": "cancelled"}})
    assert (await runner.resume(job["job_id"]))["progress"]["reviewed"] == 1
    kinds = [
        doc["kind"] for doc in review_lab.db[WRITES].find({"job_id": job["job_id"]}, sort=[("started_at", 1)])
    ]
    assert kinds == ["failed", "review"]
    assert undo_job(review_lab.db, PROJECT, job["job_id"], "alice")["restored"] == [result["task_id"]]
    assert not any(name in _fields(review_lab, result["task_id"]) for name in FIELDS)


async def test_a_run_that_outlived_its_lease_stops_at_the_undo(
    review_lab: ReviewLab, runner: JobRunner
) -> None:
    ids = [review_lab.take(PROJECT, name="CheckT1", status="completed")["task_id"] for _ in range(3)]
    job = runner.create("alice", Selection(chip_id="64Qv3", task_ids=ids))
    runner.concurrency = 1
    undos: list[dict[str, Any]] = []

    def stalled_then_undone(_reviewed: Any, _update: Any) -> None:
        if not undos:  # the run stalled past its lease, and someone undid the job meanwhile
            past = datetime.now(UTC) - timedelta(seconds=1)
            review_lab.db[JOBS].update_one({"_id": job["job_id"]}, {"$set": {"lease_until": past}})
            undos.append(undo_job(review_lab.db, PROJECT, job["job_id"], "alice"))

    final = await runner.run(job["job_id"], stalled_then_undone)
    assert final["status"] == "cancelled" and final["progress"]["done"] == 1
    assert undos[0]["restored"] == [ids[0]]
    assert not any("ai_review" in _fields(review_lab, task_id) for task_id in ids)
    assert review_lab.db[WRITES].count_documents({"job_id": job["job_id"], "kind": "review"}) == 1


async def test_a_resume_that_took_the_lease_just_before_the_undo_writes_nothing(
    review_lab: ReviewLab, runner: JobRunner
) -> None:
    result = review_lab.take(PROJECT, name="CheckT1", status="completed")
    job = runner.create("alice", Selection(chip_id="64Qv3", task_ids=[result["task_id"]]))
    runner.cancel(job["job_id"])
    assert (await runner.run(job["job_id"]))["status"] == "cancelled"  # stopped before any result
    reopen = runner.reopen

    def undone_then_reopened(job_id: str) -> dict[str, Any]:
        undo_job(review_lab.db, PROJECT, job_id, "alice")  # between the resume's lease and its run
        return reopen(job_id)

    with mock.patch.object(runner, "reopen", undone_then_reopened):
        final = await runner.resume(job["job_id"])
    assert final["undo"]["by"] == "alice" and final["progress"]["done"] == 0
    assert "ai_review" not in _fields(review_lab, result["task_id"])
    assert review_lab.db[WRITES].count_documents({"job_id": job["job_id"]}) == 0


def test_a_write_over_a_change_it_did_not_read_is_not_applied(review_lab: ReviewLab) -> None:
    result = review_lab.take(PROJECT, name="CheckT1", status="completed")
    db, task_id = review_lab.db, result["task_id"]
    note = {"content": "mine", "updated_by": "qdash-ai", "updated_at": utc_now()}
    stale = Held({"ai_review_note": {**note, "content": "what I read"}})
    missed = compare_and_set(
        db, PROJECT, task_id, stale, Held({"ai_review_note": note}), meta={"kind": "review"}
    )
    assert missed["state"] == "not_applied" and "ai_review_note" not in _fields(review_lab, task_id)
    with (
        mock.patch.object(Held, "of", return_value=stale),
        pytest.raises(WriteConflictError, match="5 writes"),
    ):
        write(db, PROJECT, task_id, {"ai_review_note": note}, {"kind": "review"})
    assert "ai_review_note" not in _fields(review_lab, task_id)
    assert db[WRITES].count_documents({"task_id": task_id, "state": "not_applied"}) == 6
    assert write(db, PROJECT, task_id, {"ai_review_note": note}, {"kind": "review"}) is not None
    assert _fields(review_lab, task_id)["ai_review_note"] == note


async def test_only_editors_undo_and_only_their_projects_jobs(
    review_lab: ReviewLab, runner: JobRunner
) -> None:
    result = review_lab.take(PROJECT, name="CheckT1", status="completed")
    job_id = await _job(runner, result["task_id"])
    written = _fields(review_lab, result["task_id"])
    with pytest.raises(UndoRefusedError) as refused:
        undo_job(review_lab.db, PROJECT, job_id, "dave")
    assert str(refused.value) == (
        "Undoing a review job needs the editor role or above; dave is viewer in project proj-demo. "
        "Ask an editor or the project's owner."
    )
    with pytest.raises(UndoRefusedError, match="bob is not a member in project proj-demo"):
        undo_job(review_lab.db, PROJECT, job_id, "bob")
    with pytest.raises(ReviewNotFoundError, match="Review job not found in project proj-other"):
        undo_job(review_lab.db, "proj-other", job_id, "bob")  # bob owns proj-other: not his job
    assert _fields(review_lab, result["task_id"]) == written
    job = review_lab.db[JOBS].find_one({"_id": job_id})
    assert (
        job is not None
        and "undo" not in job
        and review_lab.db[UNDOS].count_documents({"job_id": job_id}) == 0
    )


async def test_a_running_job_is_refused_and_an_undone_job_never_runs_again(
    review_lab: ReviewLab, runner: JobRunner
) -> None:
    result = review_lab.take(PROJECT, name="CheckT1", status="completed")
    job_id = await _job(runner, result["task_id"])
    db = review_lab.db
    db[JOBS].update_one({"_id": job_id}, {"$set": {"status": "running"}})  # as a server running it
    lease = acquire(db, PROJECT, job_id, lease_s=30)
    with pytest.raises(LeaseHeldError, match=f"review job {job_id} is running in .*; cancel it first"):
        undo_job(db, PROJECT, job_id, "alice")
    assert "ai_review" in _fields(review_lab, result["task_id"])

    db[JOBS].update_one({"_id": job_id}, {"$set": {"status": "paused_budget"}})  # just claimed after a reset
    with pytest.raises(LeaseHeldError, match="cancel it first"):
        undo_job(db, PROJECT, job_id, "alice")
    db[JOBS].update_one({"_id": job_id}, {"$set": {"status": "running"}})

    expired = datetime.now(UTC) - timedelta(seconds=1)  # its process died: a server would take it over
    db[JOBS].update_one({"_id": job_id}, {"$set": {"lease_until": expired}})
    waiting = {"$and": [claimable(datetime.now(UTC), 30, 5), {"_id": job_id}]}
    assert db[JOBS].count_documents(waiting) == 1
    assert undo_job(db, PROJECT, job_id, "alice")["restored"] == [result["task_id"]]
    job = db[JOBS].find_one({"_id": job_id})
    assert job is not None and job["status"] == "cancelled" and job["lease_id"] != lease.lease_id
    assert db[JOBS].count_documents(waiting) == 0
    with pytest.raises(
        JobUndoneError, match=f"review job {job_id} was undone by alice at .*qdash review run"
    ):
        runner.prepare_resume(job_id, take_over=True)


async def test_a_write_is_never_made_without_its_record_and_a_crash_between_is_decided(
    review_lab: ReviewLab, runner: JobRunner
) -> None:
    db = review_lab.db
    collection_type = type(db[WRITES])
    result = review_lab.take(PROJECT, name="CheckT1", status="completed")
    unrecorded = review_lab.take(PROJECT, name="CheckT1", status="completed")
    crashed = await _job(runner, result["task_id"])
    assert "ai_review" in _fields(review_lab, result["task_id"])

    def refuse_records(self: Any, *args: Any, **kwargs: Any) -> Any:
        if self.name == WRITES:
            raise RuntimeError("the record could not be written")
        return original_insert(self, *args, **kwargs)

    original_insert = collection_type.insert_one
    with mock.patch.object(collection_type, "insert_one", refuse_records):
        job = runner.create("alice", Selection(chip_id="64Qv3", task_ids=[unrecorded["task_id"]]))
        with pytest.raises(RuntimeError, match="the record could not be written"):
            await runner.run(job["job_id"])
    db[JOBS].update_one({"_id": job["job_id"]}, {"$set": {"status": "cancelled"}})  # nobody resumes it
    assert "ai_review" not in _fields(review_lab, unrecorded["task_id"])  # no record, no write

    # A process killed after its write but before marking the record done: the record says started.
    db[WRITES].update_one({"job_id": crashed}, {"$set": {"state": "started"}, "$unset": {"finished_at": ""}})
    # And a later one killed after its record (it read what the first wrote) but before its write.
    first = db[WRITES].find_one({"job_id": crashed})
    assert first is not None
    never = {"content": "never written", "updated_by": "qdash-ai", "updated_at": datetime.now(UTC)}
    ghost = {
        **first,
        "_id": "ghost",
        "started_at": first["started_at"] + timedelta(seconds=1),
        "before": first["after"],
        "before_missing": [],
        "after": {**first["after"], "ai_review_note": never},
    }
    db[WRITES].insert_one(ghost)
    undo = undo_job(db, PROJECT, crashed, "alice")
    assert undo["restored"] == [result["task_id"]] and "ai_review" not in _fields(
        review_lab, result["task_id"]
    )
    states = {doc["_id"]: doc["state"] for doc in db[WRITES].find({"job_id": crashed, "kind": "review"})}
    assert states.pop("ghost") == "not_applied" and set(states.values()) == {"done"}
