"""A small writable demo lab for review tests, and settings with a model on the fake LLM server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pymongo.database import Database

from qdash.db import open_database
from qdash.db.indexes import ensure_indexes
from qdash.demo import ChipPlan, DemoSpec, SeedReport, seed_demo
from qdash.evaluation.fake_llm import FakeLLMServer
from qdash.settings import DatabaseSettings, Settings
from tests.support.settings import fake_model, settings_on_fake

KEY_ENV = "QDASH_TEST_FAKE_KEY"
TINY = DemoSpec(
    end_at=datetime(2026, 11, 25, tzinfo=UTC),
    ai_reviews=False,
    chips=(
        ChipPlan("proj-demo", "64Qv3", "square-lattice-mux-64", "alice", 2, 45),
        ChipPlan("proj-other", "64Qv3", "square-lattice-mux-64", "bob", 1, 20, bring_up=False),
    ),
)


class ReviewLab:
    """The tiny lab (bring-up + one daily run); tests take results they have not used yet."""

    def __init__(self, db: Database[dict[str, Any]], report: SeedReport) -> None:
        self.db = db
        self.report = report
        self.used: set[str] = set()

    def take(self, project: str = "proj-demo", **query: Any) -> dict[str, Any]:
        for doc in self.db["task_result_history"].find({"project_id": project, **query}):
            if doc["task_id"] not in self.used and "ai_review" not in doc:  # not reviewed by another test
                self.used.add(doc["task_id"])
                return doc
        raise LookupError(f"no unused result for {query}")


@pytest.fixture(scope="session")
def review_lab() -> Iterator[ReviewLab]:
    db = open_database(
        DatabaseSettings(name="qdash_review", embedded_persist=False, embedded_warn_documents=10**9)
    )
    report = seed_demo(db, TINY)
    ensure_indexes(db)
    yield ReviewLab(db, report)


def verdict_fields(decision: str = "PASS", label: str = "CORRECT", **fields: Any) -> dict[str, Any]:
    """A complete verdict; ``accepted``, ``questioned``, ``reason`` or any field can be given."""
    return {
        "decision": decision,
        "label": label,
        "accepted_parameters": fields.pop("accepted", ["t1"]),
        "questioned_parameters": fields.pop("questioned", []),
        "reason": fields.pop("reason", "Clean decay on the fit."),
        "closest_knowledge_case": "none",
        "suggested_labels": [],
        "recommended_action": "Use the value.",
        "note": "",
        **fields,
    }


def verdict_json(decision: str = "PASS", label: str = "CORRECT", **fields: Any) -> str:
    return json.dumps(verdict_fields(decision, label, **fields))


def fake_models(fake: FakeLLMServer) -> dict[str, Any]:
    """The models ``fake`` (Responses, multimodal; the first, so the default) and ``chat`` (Chat
    Completions), for ``copilot.models``."""
    url = fake.openai_base_url
    return {
        "fake": fake_model(url, key_env=KEY_ENV),
        "chat": fake_model(
            url,
            "gpt-4o",
            key_env=KEY_ENV,
            provider="openai_compatible",
            api_style="chat_completions",
            multimodal=False,
        ),
    }


def review_settings(
    fake: FakeLLMServer, data_dir: Path, *, multimodal: bool = True, **review: Any
) -> Settings:
    return settings_on_fake(
        data_dir,
        fake_models(fake),
        analysis={"multimodal": multimodal},
        agent={"max_retries": 0},
        review=review,
    )


@pytest.fixture(autouse=True)
def _fake_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test")
