"""``GET /copilot/expected-image``: the operator's reference figures or the demo's ideal ones, no auth,
no traversal; ``GET /copilot/projects``: the page's project selector."""

from __future__ import annotations

from pathlib import Path

import httpx
from fastapi import FastAPI

from qdash.demo.references import REFERENCE_DIR
from tests.api.api_helpers import auth

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16


async def test_expected_image(client: httpx.AsyncClient, app: FastAPI, tmp_path: Path) -> None:
    (tmp_path / "knowledge" / "CheckT1").mkdir(parents=True)
    (tmp_path / "knowledge" / "CheckT1" / "0.png").write_bytes(PNG)
    (tmp_path / "secret.png").write_bytes(PNG)
    knowledge = "CheckT1:\n  summary: T1.\n  expected_images:\n    - alt_text: Clean decay.\n"
    (tmp_path / "task_knowledge.yaml").write_text(knowledge, encoding="utf-8")
    app.state.settings = app.state.settings.model_copy(update={"config_dir": tmp_path})
    found = await client.get("/copilot/expected-image?task_name=CheckT1&index=0")
    assert found.status_code == 200 and found.headers["content-type"] == "image/png"
    assert found.content == PNG  # the operator's file, not the demo's rendered reference
    for query in ("task_name=CheckT1&index=1", "task_name=..&index=0", "task_name=CheckT2&index=0"):
        missing = await client.get(f"/copilot/expected-image?{query}")
        assert missing.status_code == 404, query
    assert (await client.get("/copilot/expected-image?task_name=CheckT1&index=-1")).status_code == 422


async def test_expected_image_renders_the_demo_reference(client: httpx.AsyncClient, app: FastAPI) -> None:
    settings = app.state.settings
    found = await client.get("/copilot/expected-image?task_name=CheckRabi&index=0")
    assert found.status_code == 200 and found.headers["content-type"] == "image/png"
    assert found.content[:8] == PNG[:8] and len(found.content) > 1000
    cached = settings.database.data_dir / REFERENCE_DIR / "CheckRabi.png"
    assert cached.read_bytes() == found.content
    for query in (
        "task_name=CheckRabi&index=1",  # one reference listed
        "task_name=CheckStatus&index=0",  # no knowledge, nothing to draw
        "task_name=NoSuchTask&index=0",
        "task_name=..%2Fconfig&index=0",
        "task_name=CheckRabi%2F..%2F..&index=0",
        "task_name=%2Fetc%2Fpasswd&index=0",
    ):
        missing = await client.get(f"/copilot/expected-image?{query}")
        assert missing.status_code == 404 and missing.json() == {"detail": "Expected image not found"}, query


async def test_projects(client: httpx.AsyncClient) -> None:
    body = (await client.get("/copilot/projects", headers=auth())).json()
    assert body == {
        "username": "alice",
        "current": "proj-a",
        "projects": [
            {"project_id": "proj-a", "name": "Lab A", "role": "owner"},
            {"project_id": "proj-b", "name": "Lab B", "role": "viewer"},
        ],
    }
    assert (await client.get("/copilot/projects", headers=auth("dave"))).json()["projects"] == []
