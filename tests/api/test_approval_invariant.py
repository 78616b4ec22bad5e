"""The approvals invariant, under random play: a model that puts 0-3 write calls (with or without
``ask_user``) in a round, people deciding by id, "yes"/"no", "yes CODE", in several tabs with and
without sessions, in both dashboard dialects, and server restarts in between.

After every step: every write in the lab's documents is an approval the same person was shown,
alone, in an answer, and then decided (by its card, its code, or a bare word right after that
answer), and every audit record agrees with the document. The oracle is this file's own bookkeeping
of what each tab was shown and said, plus raw reads of the documents: never the code under test.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from pymongo.database import Database

from qdash.actions.audit import holds
from qdash.api.app import create_app
from qdash.copilot.assistant import Assistant
from qdash.copilot.demo_model.fallback import DEMO_MODEL
from qdash.engine.items import AssistantMessage, FunctionCall, ModelResponse, UserMessage
from qdash.engine.providers.base import DeltaSink, ModelIdentity, ModelRequest
from qdash.engine.providers.factory import ModelRegistry
from qdash.repositories.task_results import TASK_RESULTS
from qdash.settings import Settings, load_settings
from tests.api.api_helpers import parse_sse, t1_run

SEQUENCES = 300
STEPS = 7
TASKS = ("inv-t1-a", "inv-t1-b", "inv-t1-c")
FIELDS = ("excluded", "excluded_reason", "excluded_by", "excluded_by_user_id", "excluded_at", "user_note")
OURS = ("copilot_action_approval", "copilot_action_pending", "copilot_action_audit")
WRITES = ("exclude_task_result", "restore_task_result", "note_task_result")
_CODE = re.compile(r"\*\*yes ([0-9A-F]{6})\*\*")
Doc = dict[str, Any]


def code(approval_id: str) -> str:
    """The short code a card shows: the oracle's own reading of an id (``apv_`` + hex)."""
    return approval_id[4:10].upper()


class RandomRounds(ModelIdentity):
    """A model that answers a question with a random round of calls, and anything else with text."""

    def __init__(self, rng: random.Random) -> None:
        super().__init__("random-rounds")
        self.rng = rng

    async def request(self, request: ModelRequest, on_text: DeltaSink | None = None) -> ModelResponse:
        calls = [self._write() for _ in range(self.rng.randint(0, 3))]
        if self.rng.random() < 0.4:
            calls.append(("ask_user", {"question": "Plot it?", "options": ["yes", "no"]}))
        self.rng.shuffle(calls)
        if request.tool_choice != "auto" or not isinstance(request.items[-1], UserMessage) or not calls:
            text = json.dumps(
                {"blocks": [{"type": "text", "content": "ok", "chart": None}], "assessment": None}
            )
            return ModelResponse([AssistantMessage(text)], model=self.name)
        items = [FunctionCall(f"c{i}", name, json.dumps(args)) for i, (name, args) in enumerate(calls)]
        return ModelResponse(list(items), model=self.name)

    def _write(self) -> tuple[str, Doc]:
        tool, task = self.rng.choice(WRITES), self.rng.choice(TASKS)
        extra = {"exclude_task_result": {"reason": "r"}, "note_task_result": {"content": "n"}}.get(tool, {})
        return tool, {"task_id": task, **extra}


@dataclass
class Tab:
    """One browser tab: who, which session (None: a client without sessions), which dialect."""

    user: str
    session: str | None
    newest: bool
    history: list[Doc] = field(default_factory=list)
    last_shown: list[str] = field(default_factory=list)
    """The codes of the approvals the last answer showed."""
    cards: dict[str, str] = field(default_factory=dict)
    """Every approval this tab was shown (alone in its answer): code → id ("" on a text card)."""


@dataclass
class Oracle:
    """What the people knowingly approved: (user, code) pairs."""

    approved: set[tuple[str, str]] = field(default_factory=set)
    original: dict[str, Doc] = field(default_factory=dict)


def settings_for(tmp_path: Any) -> Settings:
    return load_settings(
        database={"mongo_uri": None, "data_dir": str(tmp_path / "data")},
        copilot={"default_model": "demo", "models": {"demo": DEMO_MODEL.model_dump()}},
        actions={"enabled": True},
        api={"chat_requests_per_minute": 10_000},  # thousands of turns in seconds: no rate limit
    )


def app_for(settings: Settings, db: Database[Doc], rng: random.Random) -> FastAPI:
    """A fresh server process's app (no state of its own: all of it is in the database)."""
    model = RandomRounds(rng)
    registry = ModelRegistry(
        {"demo": settings.copilot.models["demo"]}, default="demo", builders={"demo": lambda *_: model}
    )
    app = create_app(settings, db=db)
    app.state.assistant = Assistant(db, settings, models=registry)
    return app


async def send(app: FastAPI, tab: Tab, body: Doc) -> tuple[int, Doc]:
    body = {**body, "conversation_history": list(tab.history)}
    if tab.session is not None:
        body["session_id"] = tab.session
    if tab.newest:
        body["request_id"] = "r"
    headers = {"Authorization": f"Bearer demo-token-{tab.user}"}
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://t", timeout=60
    ) as c:
        response = await c.post("/copilot/chat/stream", json=body, headers=headers)
    if response.status_code != 200:
        assert response.status_code in (400, 403), response.text  # a refused decision, nothing else
        return response.status_code, {}
    name, result = parse_sse(response.content)[-1]
    assert name == "result", (name, result)
    return 200, result


def see(tab: Tab, message: str, result: Doc) -> None:
    """Record what the answer showed the person (cards and text cards), as the tab keeps it."""
    blocks = result.get("blocks") or []
    ids = [b["approval"]["id"] for b in blocks if b.get("type") == "approval"]
    text = "\n\n".join(str(b.get("content")) for b in blocks if b.get("content"))
    codes = [code(i) for i in ids] + _CODE.findall(text)
    assert len(codes) <= 1, f"one answer showed {len(codes)} proposals"
    tab.last_shown = codes
    for shown_code in codes:
        tab.cards[shown_code] = next((i for i in ids if code(i) == shown_code), "")
    shown = json.dumps(result) if tab.newest else text
    tab.history += [{"role": "user", "content": message}, {"role": "assistant", "content": shown}]


async def step(app: FastAPI, tab: Tab, rng: random.Random, oracle: Oracle) -> None:
    weights = (1, 4, 2, 3) if tab.last_shown else (4, 1, 1, 1)  # people mostly decide a card they see
    move = rng.choices(("ask", "word", "code", "card" if tab.newest else "word"), weights)[0]
    approve = rng.random() < 0.75
    clickable = sorted(shown for shown, approval_id in tab.cards.items() if approval_id)
    if move == "card" and clickable:
        shown_code = rng.choice(clickable)
        decision = {"id": tab.cards[shown_code], "approve": approve}
        status, result = await send(app, tab, {"message": "Approved", "approval": decision})
        target = shown_code
    elif move in ("word", "code") and (tab.cards or move == "word"):
        named = rng.choice(sorted(tab.cards)) if move == "code" else None
        message = ("yes" if approve else "no") + (f" {named}" if named else "")
        target = named or (tab.last_shown[0] if len(tab.last_shown) == 1 else None)
        status, result = await send(app, tab, {"message": message})
    else:
        status, result = await send(app, tab, {"message": f"question {rng.random():.3f}"})
        target, approve = None, False
    if approve and target is not None:
        oracle.approved.add((tab.user, target))
    if status == 200:
        see(tab, "…", result)


def check(db: Database[Doc], oracle: Oracle) -> None:
    """Every write was knowingly approved by its approver; every audit record agrees with its document."""
    records = list(db["copilot_action_audit"].find({"project_id": "proj-demo"}))
    done = [r for r in records if r["state"] == "done"]
    for record in done:
        assert (record["approved_by"], code(record["_id"])) in oracle.approved, record
        assert record["proposed_by"] == record["approved_by"]
    for task in TASKS:
        doc = db[TASK_RESULTS].find_one({"task_id": task}, list(FIELDS)) or {}
        mine = sorted(
            (r for r in done if r["target"]["key"] == {"task_id": task}), key=lambda r: r["started_at"]
        )
        expected = dict(oracle.original[task])
        for record in mine:  # the document is its original plus the done writes, in order
            expected = {k: v for k, v in expected.items() if k not in record["after_missing"]}
            expected |= record["after"]
        assert set(doc) - {"_id"} == set(expected) and holds(doc, expected, []), (task, doc, mine)
        for record in (
            r for r in records if r["target"]["key"] == {"task_id": task} and r["state"] != "done"
        ):
            assert record["state"] in ("failed", "not_applied"), record
    if done:
        newest = max(done, key=lambda r: r["started_at"])
        target_doc = db[TASK_RESULTS].find_one(newest["target"]["key"])
        assert holds(target_doc, newest["after"], newest["after_missing"])


def reset(db: Database[Doc], oracle: Oracle) -> None:
    for name in OURS:
        db[name].delete_many({})
    db[TASK_RESULTS].delete_many({"task_id": {"$in": list(TASKS)}})
    for task in TASKS:
        db[TASK_RESULTS].insert_one({**t1_run(task, [], execution="20261120-000"), "_id": task})
        oracle.original[task] = {}


def tabs_for(rng: random.Random) -> Sequence[Tab]:
    """Two to four tabs: alice's with and without sessions, sometimes carol's, either dialect."""
    tabs = [Tab("alice", None, False), Tab("alice", rng.choice((None, "s-1")), rng.random() < 0.5)]
    if rng.random() < 0.5:
        tabs.append(Tab("alice", "s-2", True))
    if rng.random() < 0.3:
        tabs.append(Tab("carol", None, rng.random() < 0.5))
    return tabs


@pytest.mark.slow
async def test_every_write_is_an_approval_its_person_saw_alone_and_decided(
    lab_db: Database[Doc], tmp_path: Any
) -> None:
    settings = settings_for(tmp_path)
    writes = 0
    for seed in range(SEQUENCES):
        rng = random.Random(seed)
        oracle = Oracle()
        reset(lab_db, oracle)
        app = app_for(settings, lab_db, rng)
        tabs = tabs_for(rng)
        tab = tabs[0]
        for _ in range(STEPS):
            if rng.random() < 0.1:
                app = app_for(settings, lab_db, rng)  # a restart: a new process on the same data
            tab = tab if rng.random() < 0.6 else rng.choice(tabs)
            await step(app, tab, rng, oracle)
            try:
                check(lab_db, oracle)
            except AssertionError as failure:
                raise AssertionError(f"sequence {seed}: {failure}") from failure
        writes += lab_db["copilot_action_audit"].count_documents({"state": "done"})
    assert writes > SEQUENCES // 2  # the play really writes: approvals by card, code and word
