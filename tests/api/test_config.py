"""``GET /copilot/expected-image``: reference figures from the knowledge folder, no auth, no traversal;
``GET /copilot/projects``: the page's project selector."""

from __future__ import annotations

from pathlib import Path

import httpx
from fastapi import FastAPI

from tests.api.api_helpers import auth

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16


async def test_expected_image(client: httpx.AsyncClient, app: FastAPI, tmp_path: Path) -> None:
    (tmp_path / "knowledge" / "CheckT1").mkdir(parents=True)
    (tmp_path / "knowledge" / "CheckT1" / "0.png").write_bytes(PNG)
    (tmp_path / "secret.png").write_bytes(PNG)
    app.state.settings = app.state.settings.model_copy(update={"config_dir": tmp_path})
    found = await client.get("/copilot/expected-image?task_name=CheckT1&index=0")
    assert found.status_code == 200 and found.headers["content-type"] == "image/png" and found.content == PNG
    for query in ("task_name=CheckT1&index=1", "task_name=..&index=0", "task_name=CheckT2&index=0"):
        missing = await client.get(f"/copilot/expected-image?{query}")
        assert missing.status_code == 404, query
    assert (await client.get("/copilot/expected-image?task_name=CheckT1&index=-1")).status_code == 422


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
