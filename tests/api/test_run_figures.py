"""Run figures in the chat: a task-result tool attaches the run's figure to the answer, and
``GET /copilot/figures/{id}`` serves it to members of the run's project only, never a file outside
the data directory.

The model is the fake LLM through the real openai SDK; the tools, the SSE writer and the endpoint
are the real ones, on a run inserted into the demo lab's project.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
from fastapi import FastAPI
from pymongo.database import Database

from qdash.evaluation.fake_llm import FakeLLMServer, call
from tests.api.api_helpers import assistant_app, fake_llm_settings, parse_sse, t1_run

PNG = b"\x89PNG\r\n\x1a\n" + b"run figure bytes"
ALICE = {"Authorization": "Bearer demo-token-alice"}  # member of proj-demo only
BOB = {"Authorization": "Bearer demo-token-bob"}  # member of proj-other only
ANSWER = {"blocks": [{"type": "text", "content": "T1 of Q16 is 41 μs.", "chart": None}], "assessment": "good"}


def insert_run(
    db: Database[dict[str, Any]], task_id: str, figure_path: list[str], project: str = "proj-demo"
) -> None:
    db["task_result_history"].insert_one(t1_run(task_id, figure_path, project=project, execution="exec-fig"))


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """The real_app's data directory, with the run figure and a PNG just outside it."""
    figures = tmp_path / "data" / "fig"
    figures.mkdir(parents=True)
    (figures / "t1.png").write_bytes(PNG)
    (tmp_path / "outside.png").write_bytes(b"\x89PNG\r\n\x1a\nsecret")
    return tmp_path / "data"


async def get(app: FastAPI, path: str, headers: dict[str, str]) -> httpx.Response:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
        return await client.get(path, headers=headers)


async def test_the_figure_is_served_to_members_of_its_project_only(
    real_app: FastAPI, lab_db: Database[dict[str, Any]], data_dir: Path
) -> None:
    insert_run(lab_db, "t-fig-1", ["fig/t1.png"])
    response = await get(real_app, "/copilot/figures/t-fig-1", ALICE)
    assert response.status_code == 200
    assert response.headers["content-type"] == "image/png" and response.content == PNG
    other = await get(real_app, "/copilot/figures/t-fig-1", BOB)
    assert other.status_code == 404 and "Figure not found" in other.json()["detail"]
    foreign = await get(real_app, "/copilot/figures/t-fig-1", {**BOB, "X-Project-Id": "proj-demo"})
    assert foreign.status_code == 403
    assert (await get(real_app, "/copilot/figures/t-fig-1", {})).status_code == 401
    assert (await get(real_app, "/copilot/figures/no-such-run", ALICE)).status_code == 404


@pytest.mark.parametrize("figure_path", ["../outside.png", "fig/../../outside.png", "ABSOLUTE"])
async def test_a_figure_path_outside_the_data_dir_is_refused(
    real_app: FastAPI, lab_db: Database[dict[str, Any]], data_dir: Path, figure_path: str
) -> None:
    outside = data_dir.parent / "outside.png"
    insert_run(lab_db, "t-escape", [str(outside) if figure_path == "ABSOLUTE" else figure_path])
    response = await get(real_app, "/copilot/figures/t-escape", ALICE)
    assert response.status_code == 404
    assert b"secret" not in response.content


async def test_an_id_that_looks_like_a_path_is_only_an_id(
    real_app: FastAPI, lab_db: Database[dict[str, Any]], data_dir: Path
) -> None:
    insert_run(lab_db, "t-fig-1", ["fig/t1.png"])
    for path in ("/copilot/figures/..%2Foutside.png", "/copilot/figures/..%2F..%2Fdata%2Ffig%2Ft1.png"):
        assert (await get(real_app, path, ALICE)).status_code == 404


async def chat(app: FastAPI, query: str = "") -> list[tuple[str, dict[str, Any]]]:
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://t", timeout=30
    ) as c:
        response = await c.post(f"/copilot/chat/stream{query}", json={"message": "T1 of Q16?"}, headers=ALICE)
    assert response.status_code == 200
    return parse_sse(response.content)


def script_latest_t1(fake: FakeLLMServer) -> None:
    arguments = {"task_name": "CheckT1", "chip_id": "64Qv3", "qid": "16"}
    fake.script(call("get_latest_task_result", arguments), json.dumps(ANSWER))


async def test_a_task_result_tool_attaches_its_run_figure_to_the_answer(
    real_app: FastAPI, lab_db: Database[dict[str, Any]], fake_llm: FakeLLMServer, data_dir: Path
) -> None:
    insert_run(lab_db, "t-fig-1", ["fig/t1.png"])
    script_latest_t1(fake_llm)
    events = await chat(real_app)
    assert {name for name, _ in events} == {"status", "result"}  # the dashboard's default stream
    name, result = events[-1]
    assert name == "result"
    text, shown = result["blocks"]  # that dashboard renders text and chart blocks only
    assert text == ANSWER["blocks"][0]
    image, caption = shown["content"].split("\n\n")  # a markdown image above the caption
    assert shown["type"] == "text" and caption.startswith("Run figure: CheckT1 · 16 · 64Qv3")
    assert image == f"![{caption}](/api/executions/figure?path=fig%2Ft1.png)"
    script_latest_t1(fake_llm)
    _, extended = (await chat(real_app, "?events=extended"))[-1]  # our page gets the figure itself
    figure = extended["blocks"][1]
    assert figure["type"] == "figure" and figure["chart"] is None
    assert figure["content"] == caption
    reference = figure["figure"]
    assert reference["id"] == "t-fig-1" and reference["url"] == "/copilot/figures/t-fig-1"
    assert (reference["task_name"], reference["qid"], reference["execution_id"]) == (
        "CheckT1",
        "16",
        "exec-fig",
    )
    assert reference["start_at"]
    seen = json.loads(next(iter(fake_llm.last_request.tool_outputs().values())))
    assert "_attach" not in seen and "/copilot/figures" not in json.dumps(seen)
    assert seen["attached"][0].startswith("Run figure: CheckT1") and seen["output_parameters"]
    served = await get(real_app, reference["url"], ALICE)
    assert served.status_code == 200 and served.content == PNG


async def test_the_extended_stream_announces_the_figure(
    real_app: FastAPI, lab_db: Database[dict[str, Any]], fake_llm: FakeLLMServer, data_dir: Path
) -> None:
    insert_run(lab_db, "t-fig-1", ["fig/t1.png"])
    script_latest_t1(fake_llm)
    events = await chat(real_app, "?events=extended")
    names = [name for name, _ in events]
    assert (
        names.index("tool_start") < names.index("tool_result") < names.index("figure") < names.index("result")
    )
    start = dict(events)["tool_start"]
    assert start["tool"] == "get_latest_task_result" and start["arguments"]["qid"] == "16"
    end = dict(events)["tool_result"]
    assert end["is_error"] is False and end["duration_ms"] >= 0
    assert "CheckT1" in end["summary"] and len(end["summary"]) <= 160
    assert [f["id"] for f in end["figures"]] == ["t-fig-1"]
    assert dict(events)["figure"]["url"] == "/copilot/figures/t-fig-1"


async def test_a_run_without_a_figure_attaches_nothing(
    real_app: FastAPI, lab_db: Database[dict[str, Any]], fake_llm: FakeLLMServer, data_dir: Path
) -> None:
    insert_run(lab_db, "t-nofig", [])
    script_latest_t1(fake_llm)
    _, result = (await chat(real_app))[-1]
    assert result["blocks"] == ANSWER["blocks"]
    seen = json.loads(next(iter(fake_llm.last_request.tool_outputs().values())))
    assert "attached" not in seen


async def test_the_json_analysis_endpoint_returns_the_figure_block(
    real_app: FastAPI, lab_db: Database[dict[str, Any]], fake_llm: FakeLLMServer, data_dir: Path
) -> None:
    """``POST /copilot/analyze`` validates its answer against the response model: a figure block
    must pass it with its reference, and text blocks keep exactly type/content/chart."""
    insert_run(lab_db, "t-fig-1", ["fig/t1.png"])
    script_latest_t1(fake_llm)
    body = {
        "task_name": "CheckT1",
        "chip_id": "64Qv3",
        "qid": "16",
        "execution_id": "exec-fig",
        "task_id": "t-fig-1",
        "message": "Is this fit good?",
    }
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=real_app), base_url="http://t", timeout=30
    ) as c:
        response = await c.post("/copilot/analyze", json=body, headers=ALICE)
    assert response.status_code == 200, response.text
    text, figure = response.json()["blocks"]
    assert text == ANSWER["blocks"][0]
    assert figure["type"] == "figure" and figure["figure"]["url"] == "/copilot/figures/t-fig-1"


@pytest.fixture
async def roots_app(
    tmp_path: Path,
    lab_db: Database[dict[str, Any]],
    fake_llm: FakeLLMServer,
    data_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> AsyncIterator[FastAPI]:
    """The app with upstream's container path ``/app/calib_data`` mapped to a local directory."""
    lab = tmp_path / "lab" / "alice" / "fig"
    lab.mkdir(parents=True)
    (lab / "rabi.png").write_bytes(PNG)
    roots = {"figure_roots": {"/app/calib_data": str(tmp_path / "lab")}}
    settings = fake_llm_settings(fake_llm, monkeypatch, data_dir, lab=roots)
    async with assistant_app(settings, lab_db) as app:
        yield app


def by_path(path: str, route: str = "/api/executions/figure") -> str:
    return f"{route}?{urlencode({'path': path})}"


async def test_a_dashboard_loads_a_figure_by_its_stored_path_within_its_project(
    roots_app: FastAPI, lab_db: Database[dict[str, Any]]
) -> None:
    """Both dashboards load ``/api/executions/figure?path=`` with ``<img src>``: the newest one's
    proxy forwards it as ``/executions/figure`` with the cookie's token as a bearer header, an older
    rewrite as ``/api/executions/figure`` with the cookie itself."""
    insert_run(lab_db, "t-fig-1", ["fig/t1.png"])
    insert_run(lab_db, "t-fig-2", ["/app/calib_data/alice/fig/rabi.png"])
    for route in ("/executions/figure", "/api/executions/figure"):
        for path in ("fig/t1.png", "/app/calib_data/alice/fig/rabi.png"):
            served = await get(roots_app, by_path(path, route), ALICE)
            assert served.status_code == 200 and served.content == PNG
            assert served.headers["content-type"] == "image/png"
    cookie = {"Cookie": "access_token=demo-token-alice"}
    assert (await get(roots_app, by_path("fig/t1.png"), cookie)).content == PNG
    missing = await get(roots_app, by_path("fig/t1.png"), {})
    assert missing.status_code == 401
    other = await get(roots_app, by_path("fig/t1.png"), BOB)
    assert other.status_code == 404 and "Figure not found" in other.json()["detail"]
    bob_cookie = {"Cookie": "access_token=demo-token-bob"}
    assert (await get(roots_app, by_path("fig/t1.png"), bob_cookie)).status_code == 404
    foreign = await get(roots_app, by_path("fig/t1.png"), {**BOB, "X-Project-Id": "proj-demo"})
    assert foreign.status_code == 403
    wrong = await get(roots_app, by_path("fig/t1.png"), {"Cookie": "access_token=nope"})
    assert wrong.status_code == 401


@pytest.mark.parametrize(
    "recorded",
    [
        "../outside.png",
        "fig/../../outside.png",
        "ABSOLUTE",
        "fig/link.png",
        "/app/calib_data/../outside.png",
        "/app/calib_data/alice/../../outside.png",
        "/etc/passwd",
    ],
)
async def test_a_recorded_path_outside_the_roots_is_never_read(
    roots_app: FastAPI, lab_db: Database[dict[str, Any]], data_dir: Path, recorded: str
) -> None:
    outside = data_dir.parent / "outside.png"
    (data_dir / "fig" / "link.png").symlink_to(outside)
    (data_dir.parent / "lab" / "outside.png").write_bytes(b"\x89PNG\r\n\x1a\nsecret")
    path = str(outside) if recorded == "ABSOLUTE" else recorded
    insert_run(lab_db, "t-escape", [path])
    for route in ("/executions/figure", "/api/executions/figure"):
        response = await get(roots_app, by_path(path, route), ALICE)
        assert response.status_code == 404 and b"secret" not in response.content


async def test_only_a_path_a_run_recorded_is_served(
    roots_app: FastAPI, lab_db: Database[dict[str, Any]], data_dir: Path
) -> None:
    """A readable PNG inside the data dir that no run of the project recorded, or the recorded one
    spelt differently, is not served: the path must belong to one of the caller's task results."""
    insert_run(lab_db, "t-fig-1", ["fig/t1.png"])
    (data_dir / "fig" / "private.png").write_bytes(PNG)
    insert_run(lab_db, "t-other", ["fig/private.png"], project="proj-other")
    for path in ("fig/private.png", "fig/../fig/t1.png", "./fig/t1.png", str(data_dir / "fig" / "t1.png")):
        assert (await get(roots_app, by_path(path), ALICE)).status_code == 404


async def test_an_img_tag_loads_a_figure_of_the_callers_other_project(
    roots_app: FastAPI, lab_db: Database[dict[str, Any]]
) -> None:
    """An ``<img src>`` sends the cookie but never ``X-Project-Id``: a figure of a run in a project
    that is not the caller's default is found among the caller's projects (the chat ran there with
    the header). A named project narrows the search to it; a non-member gets 404, or 403 when
    naming the project."""
    lab_db["project"].insert_one({"project_id": "proj-b", "name": "B", "owner_username": "carol"})
    lab_db["project_membership"].insert_one(
        {"project_id": "proj-b", "username": "alice", "role": "viewer", "status": "active"}
    )
    insert_run(lab_db, "t-fig-b", ["fig/t1.png"], project="proj-b")
    alice_cookie = {"Cookie": "access_token=demo-token-alice"}
    for route in ("/executions/figure", "/api/executions/figure"):
        served = await get(roots_app, by_path("fig/t1.png", route), alice_cookie)
        assert served.status_code == 200 and served.content == PNG
    narrowed = await get(roots_app, by_path("fig/t1.png"), {**alice_cookie, "X-Project-Id": "proj-demo"})
    assert narrowed.status_code == 404
    named = await get(roots_app, by_path("fig/t1.png"), {**alice_cookie, "X-Project-Id": "proj-b"})
    assert named.status_code == 200
    assert (await get(roots_app, by_path("fig/t1.png"), BOB)).status_code == 404
    foreign = await get(roots_app, by_path("fig/t1.png"), {**BOB, "X-Project-Id": "proj-b"})
    assert foreign.status_code == 403
