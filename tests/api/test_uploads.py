"""CSV uploads: 201 with inferred columns, listing and deletion per session, 4xx for bad input,
another user's or project's upload never visible, and removal with the session."""

from __future__ import annotations

from typing import Any

import httpx
from fastapi import FastAPI
from pymongo.database import Database

from qdash.api.routers.uploads import default_name
from tests.api.api_helpers import EchoSandbox, auth

CSV = b"qid,t1,ok,when\n16,45.2,true,2026-02-27T01:00:00Z\n17,,false,2026-02-27T02:00:00Z\n"


async def _upload(client: httpx.AsyncClient, headers: dict[str, str], **form: str) -> httpx.Response:
    data = {"session_id": "s1", **form}
    return await client.post(
        "/copilot/uploads", data=data, files={"file": ("T1 run.csv", CSV, "text/csv")}, headers=headers
    )


async def test_upload_list_delete(client: httpx.AsyncClient, db: Database[dict[str, Any]]) -> None:
    created = await _upload(client, auth())
    assert created.status_code == 201
    body = created.json()
    assert body["name"] == "T1_run" and body["rows"] == 2
    types = {c["name"]: c["type"] for c in body["columns"]}
    assert types["t1"] == "double" and types["ok"] == "bool" and types["qid"] == "int64"
    listed = (await client.get("/copilot/uploads?session_id=s1", headers=auth())).json()["uploads"]
    assert [u["name"] for u in listed] == ["T1_run"]
    assert (await client.get("/copilot/uploads?session_id=s2", headers=auth())).json() == {"uploads": []}
    gone = await client.delete("/copilot/uploads/T1_run?session_id=s1", headers=auth())
    assert gone.json() == {"deleted": True}
    missing = await client.delete("/copilot/uploads/T1_run?session_id=s1", headers=auth())
    assert missing.status_code == 404 and missing.json() == {"detail": "Upload not found"}


async def test_scoping(client: httpx.AsyncClient) -> None:
    assert (await _upload(client, auth("alice", "proj-b"), name="secret")).status_code == 201
    for headers in (auth("alice", "proj-a"), auth("bob", "proj-b")):
        listed = await client.get("/copilot/uploads?session_id=s1", headers=headers)
        assert listed.json() == {"uploads": []}
        deleted = await client.delete("/copilot/uploads/secret?session_id=s1", headers=headers)
        assert deleted.status_code == 404
    assert (await _upload(client, auth("bob", "proj-a"))).status_code == 403
    assert (await client.get("/copilot/uploads?session_id=s1")).status_code == 401


async def test_bad_uploads(client: httpx.AsyncClient, app: FastAPI) -> None:
    bad_name = await _upload(client, auth(), name="1bad")
    assert bad_name.status_code == 400 and "invalid upload name" in bad_name.json()["detail"]
    not_csv = await client.post(
        "/copilot/uploads",
        data={"session_id": "s1"},
        files={"file": ("x.csv", b"\x00\x01\x02", "text/csv")},
        headers=auth(),
    )
    assert 400 <= not_csv.status_code < 500
    settings = app.state.settings
    app.state.settings = settings.model_copy(
        update={"uploads": settings.uploads.model_copy(update={"max_bytes": 1024})}
    )
    big = await client.post(
        "/copilot/uploads",
        data={"session_id": "s1"},
        files={"file": ("big.csv", b"a,b\n" + b"1,2\n" * 1000, "text/csv")},
        headers=auth(),
    )
    assert big.status_code == 413 and big.json() == {"detail": "File too large (limit 1024 bytes)"}
    no_session = await client.post("/copilot/uploads", files={"file": ("x.csv", CSV)}, headers=auth())
    assert no_session.status_code == 422


async def test_deleting_the_session_deletes_its_uploads(
    client: httpx.AsyncClient, db: Database[dict[str, Any]]
) -> None:
    await client.post("/copilot/chat/sessions", json={"session_id": "s1"}, headers=auth())
    assert (await _upload(client, auth())).status_code == 201
    await client.delete("/copilot/chat/sessions/s1", headers=auth())
    assert db["copilot_upload"].count_documents({}) == 0


def test_default_name() -> None:
    assert default_name("T1 run (2).csv") == "T1_run_2"
    assert default_name("2026.csv") == "table_2026"
    assert default_name(None) == "table"
    assert default_name("ü.csv") == "table"


async def test_analysis_tool_sees_the_sessions_tables(client: httpx.AsyncClient, fake: Any) -> None:
    fake.sandbox = EchoSandbox()
    assert (await _upload(client, auth())).status_code == 201
    code = {"code": "print(len(data['T1_run']))"}
    ran = await client.post("/copilot/tools/execute_python_analysis?session_id=s1", json=code, headers=auth())
    assert ran.status_code == 200 and ran.json()["is_error"] is False, ran.text
    assert fake.sandbox.seen[-1]["T1_run"][0]["qid"] == 16
    other = await client.post(
        "/copilot/tools/execute_python_analysis?session_id=s2", json=code, headers=auth()
    )
    assert other.status_code == 200
    assert "T1_run" not in fake.sandbox.seen[-1]


def test_edge_timestamps_stay_text() -> None:
    """A cell outside the UTC range after its offset (year 1 at +14:00) would be stored as year 0
    and break every later read; such a column is kept as text, in-range offsets become UTC."""
    from qdash.settings import load_settings
    from qdash.uploads.parsing import parse_csv
    from qdash.uploads.store import _plain_row

    uploads = load_settings().uploads
    edge = parse_csv(b"q,when\n1,0001-01-01T00:00:00+14:00\n", uploads).table
    assert str(edge.schema.field("when").type) == "string"
    assert [_plain_row(row) for row in edge.to_pylist()] == [{"q": 1, "when": "0001-01-01T00:00:00+14:00"}]
    shifted = parse_csv(b"q,when\n1,2026-01-01T09:00:00+09:00\n", uploads).table
    assert _plain_row(shifted.to_pylist()[0])["when"] == "2026-01-01T00:00:00+00:00"
