"""``/copilot/reviews`` over HTTP: editor role to start, project scoping, paging, job progress over SSE."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest

from qdash.api.app import create_app
from qdash.copilot.assistant import Assistant
from qdash.evaluation.fake_llm import FakeLLMServer
from qdash.review.jobs import JOBS
from qdash.review.lease import process_owner
from tests.api.api_helpers import parse_sse

from .conftest import ReviewLab, review_settings, verdict_json


def auth(user: str, project: str | None = None) -> dict[str, str]:
    headers = {"Authorization": f"Bearer demo-token-{user}"}
    return {**headers, "X-Project-Id": project} if project else headers


@pytest.fixture
async def client(
    review_lab: ReviewLab, fake_llm: FakeLLMServer, tmp_path: Path
) -> AsyncIterator[httpx.AsyncClient]:
    fake_llm.respond_with(lambda _request: verdict_json("PASS", accepted=[]))
    settings = review_settings(fake_llm, tmp_path, multimodal=False, concurrency=4)
    app = create_app(settings, db=review_lab.db)
    app.state.assistant = Assistant(review_lab.db, settings)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t", timeout=60) as c:
        yield c
    await app.state.assistant.aclose()


async def test_a_bulk_job_over_http_with_sse_progress(
    client: httpx.AsyncClient, review_lab: ReviewLab
) -> None:
    body = {"chip_id": "64Qv3", "task_names": ["CheckRamsey"]}
    started = await client.post("/copilot/reviews", json=body, headers=auth("carol"))
    assert started.status_code == 202, started.text
    job = started.json()
    expected = review_lab.db["task_result_history"].count_documents(
        {"project_id": "proj-demo", "name": "CheckRamsey", "status": {"$in": ["completed", "failed"]}}
    )
    assert job["total"] == expected > 40 and job["model"] == "gpt-5-mini"
    events = await client.get(f"/copilot/reviews/jobs/{job['job_id']}/events", headers=auth("carol"))
    frames = parse_sse(events.content)
    name, last = frames[-1]
    assert name == "done" and last["status"] == "completed"
    assert last["progress"]["done"] == expected and sum(last["decisions"].values()) == expected
    done = [payload["progress"]["done"] for event, payload in frames if event == "progress"]
    assert done == sorted(done)

    listed = await client.get(
        "/copilot/reviews",
        params={"job_id": job["job_id"], "latest_only": "false", "limit": 200},
        headers=auth("alice"),
    )
    reviews = listed.json()["reviews"]
    assert len(reviews) == expected and {r["task_name"] for r in reviews} == {"CheckRamsey"}
    fails = await client.get(
        "/copilot/reviews",
        params={"job_id": job["job_id"], "decision": "FAIL", "latest_only": "false"},
        headers=auth("alice"),
    )
    assert {r["review_id"] for r in fails.json()["reviews"]} == {
        r["review_id"] for r in reviews if r["decision"] == "FAIL"
    }
    paging = {"job_id": job["job_id"], "limit": 10, "offset": 10, "latest_only": "false"}
    page = await client.get("/copilot/reviews", params=paging, headers=auth("alice"))
    assert [r["review_id"] for r in page.json()["reviews"]] == [r["review_id"] for r in reviews[10:20]]

    one = await client.get(f"/copilot/reviews/{reviews[0]['review_id']}", headers=auth("alice"))
    assert one.status_code == 200 and one.json()["note"].startswith("**AI review**")
    assert (
        await client.get(f"/copilot/reviews/{reviews[0]['review_id']}", headers=auth("bob"))
    ).status_code == 404
    assert (
        await client.get(f"/copilot/reviews/jobs/{job['job_id']}", headers=auth("bob"))
    ).status_code == 404
    bobs = await client.get("/copilot/reviews", params={"job_id": job["job_id"]}, headers=auth("bob"))
    assert bobs.json()["reviews"] == []


async def test_roles_scoping_and_limits(client: httpx.AsyncClient, review_lab: ReviewLab) -> None:
    theirs = review_lab.take("proj-other", status="completed")
    as_viewer = await client.post(
        "/copilot/reviews",
        json={"chip_id": "64Qv3", "task_id": theirs["task_id"]},
        headers=auth("carol", "proj-other"),
    )
    assert as_viewer.status_code == 403 and "editor role" in as_viewer.json()["detail"]
    mine = await client.post(
        "/copilot/reviews", json={"chip_id": "64Qv3", "task_id": theirs["task_id"]}, headers=auth("carol")
    )
    assert mine.status_code == 202 and mine.json()["total"] == 0  # another project's result is not selected
    unknown = await client.post(
        "/copilot/reviews", json={"chip_id": "64Qv3", "model": "nope"}, headers=auth("alice")
    )
    assert unknown.status_code == 400 and "configured models" in unknown.json()["detail"]
    no_chip = await client.post("/copilot/reviews", json={"chip_id": "99Qx"}, headers=auth("alice"))
    assert no_chip.status_code == 404
    assert no_chip.json()["detail"] == "Chip not found in project proj-demo: 99Qx (its chips: 64Qv3)"
    too_big = await client.get("/copilot/reviews", params={"limit": 201}, headers=auth("alice"))
    assert too_big.status_code == 422
    assert (await client.get("/copilot/reviews", headers=auth("dave"))).status_code == 403
    assert (await client.get("/copilot/reviews")).status_code == 401


async def test_one_result_and_cancel(client: httpx.AsyncClient, review_lab: ReviewLab) -> None:
    result = review_lab.take(status="completed", name="CheckT2Echo")
    started = await client.post(
        "/copilot/reviews", json={"chip_id": "64Qv3", "task_id": result["task_id"]}, headers=auth("alice")
    )
    assert started.json()["total"] == 1
    events = parse_sse(
        (
            await client.get(
                f"/copilot/reviews/jobs/{started.json()['job_id']}/events", headers=auth("alice")
            )
        ).content
    )
    assert events[-1][1]["progress"]["done"] == 1
    stored = review_lab.db["task_result_history"].find_one({"task_id": result["task_id"]})
    assert stored is not None and stored["ai_review"]["status"] == "completed"
    bulk = await client.post(
        "/copilot/reviews", json={"chip_id": "64Qv3", "task_names": ["CheckRabi"]}, headers=auth("alice")
    )
    cancelled = await client.post(
        f"/copilot/reviews/jobs/{bulk.json()['job_id']}/cancel", headers=auth("alice")
    )
    assert cancelled.status_code == 200
    frames = parse_sse(
        (
            await client.get(f"/copilot/reviews/jobs/{bulk.json()['job_id']}/events", headers=auth("alice"))
        ).content
    )
    assert frames[-1][1]["status"] == "cancelled" and frames[-1][1]["progress"]["done"] < bulk.json()["total"]
    resumed = await client.post(
        f"/copilot/reviews/jobs/{bulk.json()['job_id']}/resume", headers=auth("alice")
    )
    assert resumed.status_code == 202
    events_url = f"/copilot/reviews/jobs/{bulk.json()['job_id']}/events"
    finished = parse_sse((await client.get(events_url, headers=auth("alice"))).content)[-1][1]
    assert finished["status"] == "completed" and finished["progress"]["done"] == bulk.json()["total"]
    assert finished["progress"]["skipped"] == frames[-1][1]["progress"]["done"]  # kept, not redone
    as_viewer = await client.post(
        f"/copilot/reviews/jobs/{bulk.json()['job_id']}/resume", headers=auth("bob")
    )
    assert as_viewer.status_code == 404
    schema = (await client.get("/openapi.json")).json()
    assert {
        "/copilot/reviews",
        "/copilot/reviews/{review_id}",
        "/copilot/reviews/jobs/{job_id}/events",
    } <= set(schema["paths"])


async def test_a_job_leased_by_a_live_server_is_not_resumed_twice(
    client: httpx.AsyncClient, review_lab: ReviewLab
) -> None:
    result = review_lab.take(name="CheckT1", status="completed")
    started = await client.post(
        "/copilot/reviews", json={"chip_id": "64Qv3", "task_id": result["task_id"]}, headers=auth("alice")
    )
    job_id = started.json()["job_id"]
    events_url = f"/copilot/reviews/jobs/{job_id}/events"
    assert (
        parse_sse((await client.get(events_url, headers=auth("alice"))).content)[-1][1]["status"]
        == "completed"
    )
    fresh = (await client.get(f"/copilot/reviews/jobs/{job_id}", headers=auth("alice"))).json()
    assert (
        fresh["lease_owner"] == process_owner() and fresh["resume_count"] == 0 and fresh["resumed_at"] is None
    )
    # as if another server were running it now
    live = datetime.now(UTC) + timedelta(seconds=60)
    elsewhere = {"status": "running", "lease_owner": "replica-b:7:feed", "lease_id": "b", "lease_until": live}
    review_lab.db[JOBS].update_one({"_id": job_id}, {"$set": elsewhere})
    refused = await client.post(f"/copilot/reviews/jobs/{job_id}/resume", headers=auth("alice"))
    assert refused.status_code == 409
    assert (
        "running in replica-b:7:feed" in refused.json()["detail"]
        and "lease runs out" in refused.json()["detail"]
    )
    shown = (await client.get(f"/copilot/reviews/jobs/{job_id}", headers=auth("alice"))).json()
    assert shown["lease_owner"] == "replica-b:7:feed" and shown["status"] == "running"

    gone = datetime.now(UTC) - timedelta(seconds=1)  # that server died: its lease ran out
    review_lab.db[JOBS].update_one({"_id": job_id}, {"$set": {"lease_until": gone}})
    resumed = await client.post(f"/copilot/reviews/jobs/{job_id}/resume", headers=auth("alice"))
    assert resumed.status_code == 202, resumed.text
    assert (
        parse_sse((await client.get(events_url, headers=auth("alice"))).content)[-1][1]["status"]
        == "completed"
    )
    final = (await client.get(f"/copilot/reviews/jobs/{job_id}", headers=auth("alice"))).json()
    assert final["lease_owner"] == process_owner() and final["resume_count"] == 1
    assert datetime.fromisoformat(final["resumed_at"]) > gone
    assert final["progress"]["done"] == final["progress"]["skipped"] == 1  # not reviewed twice


async def test_undo_over_http_editors_only_once_and_the_job_never_resumes(
    client: httpx.AsyncClient, review_lab: ReviewLab
) -> None:
    result = review_lab.take("proj-other", name="ReadoutClassification", status="completed")
    bob, carol = auth("bob", "proj-other"), auth("carol", "proj-other")  # owner, viewer
    started = await client.post(
        "/copilot/reviews", json={"chip_id": "64Qv3", "task_id": result["task_id"]}, headers=bob
    )
    job_id = started.json()["job_id"]
    jobs_url = f"/copilot/reviews/jobs/{job_id}"
    done = parse_sse((await client.get(f"{jobs_url}/events", headers=bob)).content)[-1][1]
    assert done["status"] == "completed"
    query = {"project_id": "proj-other", "task_id": result["task_id"]}

    as_viewer = await client.post(f"{jobs_url}/undo", headers=carol)
    assert as_viewer.status_code == 403
    assert as_viewer.json()["detail"] == (
        "Undoing a review job needs the editor role or above; carol is viewer in project proj-other. "
        "Ask an editor or the project's owner."
    )
    assert (await client.post(f"{jobs_url}/undo", headers=auth("alice"))).status_code == 404
    assert "ai_review" in (review_lab.db["task_result_history"].find_one(query) or {})

    undone = await client.post(f"{jobs_url}/undo", headers=bob)
    assert undone.status_code == 200, undone.text
    body = undone.json()
    assert (body["restored"], body["skipped"], body["changed"], body["by"]) == (
        [result["task_id"]],
        [],
        True,
        "bob",
    )
    assert "ai_review" not in (review_lab.db["task_result_history"].find_one(query) or {"ai_review": 1})
    listed = await client.get("/copilot/reviews", params={"job_id": job_id}, headers=bob)
    assert listed.json()["reviews"] == []
    job = (await client.get(jobs_url, headers=bob)).json()
    assert job["undo"]["by"] == "bob" and job["undo"]["undo_id"] == body["undo_id"]

    again = (await client.post(f"{jobs_url}/undo", headers=bob)).json()
    assert again["changed"] is False and again["message"].endswith(": nothing changed")
    resumed = await client.post(f"{jobs_url}/resume", headers=bob)
    assert resumed.status_code == 409 and f"review job {job_id} was undone by bob" in resumed.json()["detail"]
    assert "/copilot/reviews/jobs/{job_id}/undo" in (await client.get("/openapi.json")).json()["paths"]
