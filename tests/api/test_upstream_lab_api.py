"""Over HTTP on the upstream-shaped lab: upstream's memberships decide who reads the project.

Upstream revokes a member with ``status: revoked`` and invites as ``pending``; its users carry a
plain ``access_token`` and often no ``default_project_id``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from qdash.settings import Settings
from tests.api.api_helpers import FakeAssistant, build_app
from tests.support.upstream_lab import UpstreamLab

READS = (("GET", "/copilot/chat/sessions"), ("POST", "/copilot/tools/get_chip_summary"))


@pytest.fixture
async def lab_client(
    upstream_lab_db: UpstreamLab, settings: Settings, fake: FakeAssistant
) -> AsyncIterator[httpx.AsyncClient]:
    app = build_app(settings, upstream_lab_db.db, fake)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as client:
        yield client


def _headers(lab: UpstreamLab, username: str, project: str | None) -> dict[str, str]:
    headers = {"Authorization": f"Bearer {lab.token(username)}"}
    return headers | ({"X-Project-Id": project} if project else {})


@pytest.mark.parametrize("username", ["carol", "dave"])  # revoked, pending
async def test_revoked_and_pending_members_get_403(
    lab_client: httpx.AsyncClient, upstream_lab_db: UpstreamLab, fake: FakeAssistant, username: str
) -> None:
    project = upstream_lab_db.project_id
    for method, path in READS:
        response = await lab_client.request(
            method, path, json={}, headers=_headers(upstream_lab_db, username, project)
        )
        assert response.status_code == 403, (username, path, response.text)
        assert response.json() == {"detail": f"Not a member of project {project}"}
        # Without X-Project-Id: carol's default_project_id and dave's invitation grant nothing either.
        implicit = await lab_client.request(
            method, path, json={}, headers=_headers(upstream_lab_db, username, None)
        )
        assert implicit.status_code == 403, (username, path, implicit.text)
    projects = await lab_client.get("/copilot/projects", headers=_headers(upstream_lab_db, username, None))
    assert project not in {p["project_id"] for p in projects.json().get("projects", [])}
    assert fake.calls == []


@pytest.mark.parametrize("username", ["alice", "bob"])  # owner with a default project; member without
async def test_active_members_read_the_lab(
    lab_client: httpx.AsyncClient, upstream_lab_db: UpstreamLab, username: str
) -> None:
    response = await lab_client.post(
        "/copilot/tools/get_chip_summary", json={}, headers=_headers(upstream_lab_db, username, None)
    )
    assert response.status_code == 200, response.text
    assert upstream_lab_db.chip_id in response.text
