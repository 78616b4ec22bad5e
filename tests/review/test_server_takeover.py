"""A ``qdash serve`` killed mid-job: the next server takes the job over by itself and finishes it.

A real server subprocess on a persisted embedded store starts a bulk job over HTTP (the fake LLM
answers slowly) and is killed with ``kill -9`` while reviews are in flight. A new server on the same
data, with short leases, claims the job once the dead server's lease runs out and runs it to the
end; nobody calls resume. Every selected result ends with exactly one review, those made before the
kill are kept, and no result is sent to the model twice. Two replicas on one shared store: the live
one keeps off the job while its holder renews the lease, and takes it over when the holder is killed.
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pymongo import MongoClient

from qdash.demo import ChipPlan, DemoSpec, seed_demo
from qdash.evaluation.fake_llm import FakeLLMServer
from tests.served import LOOPBACK, serve_process, shared_store_uri

from .conftest import verdict_json
from .killed_lab import job_and_reviews, lab_env, read_job, seed_killed_lab

BOB = {"Authorization": "Bearer demo-token-bob", "X-Project-Id": "proj-other"}
ONE_CHIP = DemoSpec(
    end_at=datetime(2026, 11, 25, tzinfo=UTC),
    chips=(ChipPlan("proj-other", "64Qv3", "square-lattice-mux-64", "bob", 1, 20, bring_up=False),),
    ai_reviews=False,
)
SHORT_LEASES = {"lease_s": 2.0, "lease_renew_s": 0.5, "resume_interval_s": 0.5}


def _wait_until(check: Any, what: str, timeout_s: float = 120) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if found := check():
            return found
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _job(port: int, job_id: str) -> dict[str, Any]:
    answer = LOOPBACK.get(f"http://127.0.0.1:{port}/copilot/reviews/jobs/{job_id}", headers=BOB)
    assert answer.status_code == 200, answer.text
    job: dict[str, Any] = answer.json()
    return job


def _start_job(port: int, qubits: int | None = None) -> str:
    """A bulk job over bob's chip's CheckT1 results (64), or those of its first ``qubits`` qubits:
    enough for the kill to land mid-job, few enough for the next server to finish in seconds."""
    body: dict[str, Any] = {"chip_id": "64Qv3", "task_names": ["CheckT1"]}
    if qubits is not None:
        body["qids"] = [str(qid) for qid in range(qubits)]
    started = LOOPBACK.post(f"http://127.0.0.1:{port}/copilot/reviews", json=body, headers=BOB)
    assert started.status_code == 202, started.text
    job_id: str = started.json()["job_id"]
    return job_id


def _finished_by_itself(port: int, job_id: str, pid: int, timeout_s: float) -> None:
    final = _wait_until(
        lambda: (found := _job(port, job_id))["status"] == "completed" and found,
        "the job to finish",
        timeout_s,
    )
    assert final["lease_owner"].split(":")[1] == str(pid)  # taken over by this server
    assert final["resume_count"] == 1 and final["resumed_at"] is not None


def test_a_killed_servers_job_is_finished_by_the_next_server_once(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    seed_killed_lab(data_dir)
    with FakeLLMServer(response_delay_s=0.3) as fake:
        fake.respond_with(lambda _request: verdict_json("PASS"))
        env = lab_env(tmp_path, data_dir, fake, **SHORT_LEASES)
        with serve_process(data_dir, env) as (port, first):
            job_id = _start_job(port, qubits=24)
            _wait_until(lambda: len(fake.requests) >= 6, "reviews in flight")
            assert _job(port, job_id)["lease_owner"].split(":")[1] == str(first.pid)
            os.kill(first.pid, signal.SIGKILL)
            first.wait(timeout=30)
        asked_before = len(fake.requests)
        job, before = read_job(data_dir, job_id)
        assert job["status"] == "running" and 0 < len(before) < job["total"], "the kill must land mid-job"

        with serve_process(data_dir, env) as (port, second):
            _finished_by_itself(port, job_id, second.pid, timeout_s=120)

    job, after = read_job(data_dir, job_id)
    assert sorted(doc["task_id"] for doc in after) == sorted(job["task_ids"])  # each once, none lost
    earlier = {doc["_id"]: doc["created_at"] for doc in before}
    assert {doc["_id"]: doc["created_at"] for doc in after if doc["_id"] in earlier} == earlier  # kept
    assert job["progress"]["done"] == job["total"] and job["progress"]["skipped"] == len(before)
    needed_model = sum(doc["source"] != "guards" for doc in after if doc["_id"] not in earlier)
    assert len(fake.requests) - asked_before == needed_model  # nothing asked twice after the restart


def test_a_server_stopping_cleanly_hands_its_job_over_without_waiting_for_the_lease(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    seed_killed_lab(data_dir)
    with FakeLLMServer(response_delay_s=0.3) as fake:
        fake.respond_with(lambda _request: verdict_json("PASS"))
        long_lease = {"lease_s": 600.0, "lease_renew_s": 200.0, "resume_interval_s": 0.5}
        env = lab_env(tmp_path, data_dir, fake, **long_lease)
        with serve_process(data_dir, env) as (port, first):
            job_id = _start_job(port, qubits=24)
            _wait_until(lambda: len(fake.requests) >= 4, "reviews in flight")
        assert first.returncode == 0  # SIGINT: a clean shutdown
        job, before = read_job(data_dir, job_id)
        assert job["status"] == "running" and len(before) < job["total"]
        assert job["lease_until"].replace(tzinfo=UTC) <= datetime.now(UTC)  # released, not 600 s ahead

        with serve_process(data_dir, env) as (port, second):
            _finished_by_itself(port, job_id, second.pid, timeout_s=120)
    job, after = read_job(data_dir, job_id)
    assert sorted(doc["task_id"] for doc in after) == sorted(job["task_ids"])


def test_a_live_replica_takes_over_the_job_of_a_killed_one(tmp_path: Path) -> None:
    """Two servers on one shared store (MongoDB, or the embedded store behind the wire double)."""
    name = f"qdash_takeover_{uuid.uuid4().hex[:10]}"
    with shared_store_uri(tmp_path / "store") as uri, MongoClient(uri, tz_aware=True) as client:
        seed_demo(client[name], ONE_CHIP)
        with FakeLLMServer(response_delay_s=0.3) as fake:
            fake.respond_with(lambda _request: verdict_json("PASS"))
            env = lab_env(tmp_path, tmp_path, fake, database={"mongo_uri": uri, "name": name}, **SHORT_LEASES)
            with serve_process(tmp_path, env) as (port_a, a), serve_process(tmp_path, env) as (port_b, b):
                job_id = _start_job(port_a)
                _wait_until(lambda: len(fake.requests) >= 6, "reviews in flight")
                time.sleep(2 * SHORT_LEASES["lease_s"])  # lease renewed: the other replica keeps off
                assert _job(port_b, job_id)["lease_owner"].split(":")[1] == str(a.pid)
                os.kill(a.pid, signal.SIGKILL)
                a.wait(timeout=30)
                asked_before = len(fake.requests)
                job, before = job_and_reviews(client[name], job_id)
                assert job["status"] == "running" and 0 < len(before) < job["total"], "kill mid-job"
                _finished_by_itself(port_b, job_id, b.pid, timeout_s=120)
        job, after = job_and_reviews(client[name], job_id)
        client.drop_database(name)
    assert sorted(doc["task_id"] for doc in after) == sorted(job["task_ids"])  # each once, none lost
    earlier = {doc["_id"] for doc in before}
    needed_model = sum(doc["source"] != "guards" for doc in after if doc["_id"] not in earlier)
    assert len(fake.requests) - asked_before == needed_model  # nothing asked twice
