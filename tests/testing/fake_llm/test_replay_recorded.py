"""Replay of the recorded real exchanges (tests/fixtures/recorded/).

(a) Every request the real client sent, and the real server accepted, is accepted by the fake's
validators; the one the real server rejected is rejected with the very same error body.
(b) Every recorded response parses with the SDK's own (default, lenient) parsing path, served
through an ``httpx2.MockTransport`` so no fake rendering is involved.
(c) The fake's event sequence for the recorded streamed turn has the recorded shape.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest
import yaml

from qdash.evaluation.fake_llm import FakeLLMServer, call, turn
from tests.recorded import RECORDED

FILES = sorted(RECORDED.glob("*.yaml"))


def interactions(path: Path) -> list[dict[str, Any]]:
    """OpenAI-wire interactions only (the Gemini-native exchanges of one file are skipped)."""
    data = yaml.safe_load(path.read_text())
    return [
        i for i in data["interactions"] if i["request"]["uri"].endswith(("/responses", "/chat/completions"))
    ]


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, FakeLLMServer]]:
    with FakeLLMServer() as openai_fake, FakeLLMServer(flavour="ollama") as ollama_fake:
        yield {"openai": openai_fake, "ollama": ollama_fake}


def test_the_recordings_ship_with_the_repository_as_their_readme_lists_them() -> None:
    """An empty folder would make the parametrized tests below vanish (an empty parameter set skips)."""
    listed = re.findall(r"^\| (\S+\.yaml) \|", (RECORDED / "README.md").read_text(), flags=re.MULTILINE)
    assert len(listed) == 8
    assert sorted(listed) == [p.name for p in FILES]


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_recorded_requests_get_the_recorded_verdict(path: Path, servers: dict[str, FakeLLMServer]) -> None:
    previous: dict[str, str] = {}  # recorded response id → the fake's id for the same exchange
    for fake in servers.values():
        fake.reset()
    for exchange in interactions(path):
        request, response = exchange["request"], exchange["response"]
        fake = servers["ollama" if "ollama.com" in request["uri"] else "openai"]
        body = dict(request["parsed_body"])
        if body.get("previous_response_id") in previous:  # the fake issues its own ids
            body["previous_response_id"] = previous[body["previous_response_id"]]
        status = response["status"]["code"]
        if status == 200:
            fake.script(turn("ok", lenient=True))
        endpoint = "responses" if request["uri"].endswith("/responses") else "chat/completions"
        reply = httpx2.post(f"{fake.openai_base_url}/{endpoint}", json=body, timeout=10)
        assert reply.status_code == status, reply.text
        if status != 200:
            assert reply.json() == response["parsed_body"]
            continue
        assert fake.last_request.verdict == "accepted"
        fake.assert_done()
        if "parsed_body" in response and endpoint == "responses":
            previous[response["parsed_body"]["id"]] = reply.json()["id"]


def _replaying_client(body: str, content_type: str) -> openai.OpenAI:
    def handler(_: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(200, text=body, headers={"content-type": content_type})

    transport = httpx2.MockTransport(handler)
    return openai.OpenAI(
        api_key="sk-test", base_url="http://recorded/v1", http_client=httpx2.Client(transport=transport)
    )


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_recorded_responses_parse_with_the_sdk(path: Path) -> None:
    for exchange in interactions(path):
        request, response = exchange["request"], exchange["response"]
        if response["status"]["code"] != 200:
            continue
        body = request["parsed_body"]
        if "parsed_body" in response:
            client = _replaying_client(json.dumps(response["parsed_body"]), "application/json")
            if request["uri"].endswith("/responses"):
                parsed = client.responses.create(**body)
                assert parsed.id == response["parsed_body"]["id"]
                assert [o.type for o in parsed.output] == [
                    o["type"] for o in response["parsed_body"]["output"]
                ]
                assert isinstance(parsed.output_text, str)
            else:
                completion = client.chat.completions.create(**body)
                assert completion.choices[0].message.role == "assistant"
                assert (
                    completion.choices[0].finish_reason
                    == response["parsed_body"]["choices"][0]["finish_reason"]
                )
        else:
            client = _replaying_client(response["body"]["string"], "text/event-stream")
            with client.responses.stream(**{k: v for k, v in body.items() if k != "stream"}) as stream:
                kinds = [event.type for event in stream]
                final = stream.get_final_response()
            assert kinds[-1] == "response.completed"
            assert final.output


def _dedup(kinds: list[str]) -> list[str]:
    return [k for n, k in enumerate(kinds) if n == 0 or kinds[n - 1] != k]


def test_fake_stream_has_the_recorded_event_shape(servers: dict[str, FakeLLMServer]) -> None:
    path = RECORDED / "openai_responses__test_openai_responses_stream.yaml"
    first = interactions(path)[0]
    recorded = [
        line.removeprefix("event: ")
        for line in first["response"]["body"]["string"].splitlines()
        if line.startswith("event: ")
    ]
    fake = servers["openai"]
    fake.reset()
    fake.script(turn(call("get_capital", {"country": "France"})))
    client = fake.sync_openai()
    with client.responses.stream(
        **{k: v for k, v in first["request"]["parsed_body"].items() if k != "stream"}
    ) as s:
        ours = [event.type for event in s]
    assert _dedup(ours) == _dedup(recorded)
    fake.assert_done()
