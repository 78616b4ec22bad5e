"""``GET /copilot/models``: configured models probed against the fake LLM server on loopback."""

from __future__ import annotations

import socket
from typing import Any

import httpx
from fastapi import FastAPI

from qdash.evaluation.fake_llm import FakeLLMServer, ModelSpec
from qdash.settings import load_settings
from tests.api.api_helpers import auth


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_models_reachability_and_tools(client: httpx.AsyncClient, app: FastAPI, tmp_path: Any) -> None:
    dead = f"http://127.0.0.1:{_closed_port()}/v1"
    models = [ModelSpec("qwen3:8b"), ModelSpec("gemma:2b", capabilities=("completion",))]
    with FakeLLMServer(flavour="ollama", models=models) as ollama, FakeLLMServer() as openai_fake:
        app.state.settings = load_settings(
            database={"data_dir": str(tmp_path)},
            copilot={
                "default_model": "local",
                "models": {
                    "local": {
                        "provider": "ollama",
                        "name": "qwen3:8b",
                        "base_url": ollama.openai_base_url,
                        "api_key_env": None,
                    },
                    "small": {
                        "provider": "ollama",
                        "name": "gemma:2b",
                        "base_url": ollama.openai_base_url,
                        "api_key_env": None,
                        "tool_mode": "text",
                    },
                    "missing": {
                        "provider": "ollama",
                        "name": "nope:1b",
                        "base_url": ollama.openai_base_url,
                        "api_key_env": None,
                    },
                    "compat": {
                        "provider": "openai_compatible",
                        "name": "gpt-4o",
                        "api_style": "chat_completions",
                        "base_url": openai_fake.openai_base_url,
                        "api_key_env": None,
                    },
                    "down": {"provider": "ollama", "name": "qwen3:8b", "base_url": dead, "api_key_env": None},
                    "cloud": {
                        "provider": "openai",
                        "name": "gpt-5-mini",
                        "api_key_env": "QDASH_TEST_NO_SUCH_KEY",
                    },
                },
            },
        )
        response = await client.get("/copilot/models", headers=auth())
    assert response.status_code == 200
    status = {m["alias"]: m for m in response.json()["models"]}
    assert status["local"]["reachable"] is True and status["local"]["tool_capable"] is True
    assert status["local"]["default"] is True
    assert status["small"]["tool_capable"] is False and status["small"]["tool_mode"] == "text"
    assert status["missing"]["reachable"] is False and "not pulled" in status["missing"]["detail"]
    assert status["compat"]["reachable"] is True
    assert status["down"]["reachable"] is False and status["down"]["detail"].startswith("unreachable")
    assert status["cloud"] == {
        "alias": "cloud",
        "provider": "openai",
        "name": "gpt-5-mini",
        "default": False,
        "tool_mode": "auto",
        "reachable": False,
        "tool_capable": True,
        "detail": "no API key (set QDASH_TEST_NO_SUCH_KEY)",
    }
    assert "127.0.0.1" not in response.text


async def test_demo_model_is_listed_with_its_label(
    client: httpx.AsyncClient, app: FastAPI, tmp_path: Any
) -> None:
    app.state.settings = load_settings(
        database={"data_dir": str(tmp_path)},
        copilot={
            "default_model": "demo",
            "models": {"demo": {"provider": "demo", "name": "scripted", "api_key_env": None}},
        },
    )
    response = await client.get("/copilot/models", headers=auth())
    listed = [m for m in response.json()["models"] if m["provider"] == "demo"]
    assert listed == [
        {
            "alias": "demo",
            "provider": "demo",
            "name": "scripted",
            "default": True,
            "tool_mode": "auto",
            "reachable": True,
            "tool_capable": True,
            "detail": "demo model: scripted answers",
        }
    ]
