"""schemathesis against our OpenAPI document, in-process (ASGI), with a valid token and project.

Bounded examples per operation keep it fast; the assertion is the contract's floor: whatever the
input, no 5xx, and every successful JSON answer matches its documented response schema. The app
is built at import (schemathesis needs the schema to generate the tests) on an in-memory store
with the API tests' users and the scripted assistant; limits are raised so the fuzzer reaches the
handlers instead of the 429s.
"""

from __future__ import annotations

import tempfile
from typing import Any

import mongomock_ng
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import response_schema_conformance

from qdash.settings import load_settings
from tests.api.api_helpers import FakeAssistant, auth, build_app, seed_tenancy

_DB: Any = mongomock_ng.MongoClient(tz_aware=True)["qdash_fuzz"]
seed_tenancy(_DB)
_SETTINGS = load_settings(
    database={"mongo_uri": None, "data_dir": tempfile.mkdtemp(prefix="qdash-fuzz-")},
    api={"chat_requests_per_minute": 10_000, "max_concurrent_streams_per_user": 100},
)
schema = schemathesis.openapi.from_asgi("/openapi.json", build_app(_SETTINGS, _DB, FakeAssistant()))


@schema.parametrize()
@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_server_errors(case: Any) -> None:
    response = case.call(headers=auth("alice", "proj-a"))
    where = f"{case.method} {case.path}: {response.status_code}"
    assert response.status_code < 500, f"{where} {response.text[:300]}"
    if response.status_code < 400 and "json" in response.headers.get("content-type", ""):
        case.validate_response(response, checks=[response_schema_conformance])
