"""API fixtures: an app on a fresh database with seeded users and a scripted assistant."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from api_helpers import FakeAssistant, build_app, seed_tenancy
from fastapi import FastAPI
from pymongo.database import Database

from qdash.settings import Settings


@pytest.fixture
def db(mongo_db: Database[dict[str, Any]]) -> Database[dict[str, Any]]:
    seed_tenancy(mongo_db)
    return mongo_db


@pytest.fixture
def fake() -> FakeAssistant:
    return FakeAssistant()


@pytest.fixture
def app(settings: Settings, db: Database[dict[str, Any]], fake: FakeAssistant) -> FastAPI:
    return build_app(settings, db, fake)


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as c:
        yield c
