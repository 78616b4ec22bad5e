"""``GET /copilot/models`` (ours): the configured models, whether each answers, and whether it can call tools.

Why a live probe: "the copilot is broken" is most often "the model server is down" or "this local
model has no tool support" (then the text protocol is used). Probes run concurrently with short
timeouts on async HTTP, so the event loop never blocks; base URLs and keys are never returned.
"""

from __future__ import annotations

import asyncio
import os
from typing import Literal

import httpx2
from fastapi import APIRouter
from pydantic import BaseModel

from qdash.api.deps import AppSettings, CurrentUser
from qdash.api.schemas import ERROR_RESPONSES
from qdash.copilot.demo_model import DEMO_LABEL
from qdash.engine.providers.ollama import native_root
from qdash.settings import ModelSettings

router = APIRouter(prefix="/copilot", tags=["models"])

PROBE_TIMEOUT_S = 2.0
OPENAI_URL = "https://api.openai.com/v1"
OLLAMA_URL = "http://localhost:11434/v1"


class ModelStatus(BaseModel):
    alias: str
    provider: str
    name: str
    default: bool
    tool_mode: Literal["auto", "native", "text"]
    reachable: bool
    tool_capable: bool | None
    """Native tool calling; None when the server does not say. Without it the text protocol is used."""
    detail: str


class ModelList(BaseModel):
    models: list[ModelStatus]


async def _probe_ollama(client: httpx2.AsyncClient, config: ModelSettings) -> tuple[bool, bool | None, str]:
    root = native_root(config.base_url or OLLAMA_URL)
    version = await client.get(f"{root}/api/version")
    if version.status_code != 200:
        return False, None, f"server answered HTTP {version.status_code}"
    show = await client.post(f"{root}/api/show", json={"model": config.name})
    if show.status_code == 404:
        return False, None, f"model {config.name} is not pulled on the server"
    if show.status_code != 200:
        return True, None, f"model info unavailable (HTTP {show.status_code})"
    caps = show.json().get("capabilities")
    if not isinstance(caps, list):
        return True, None, "server does not report capabilities"
    return True, "tools" in caps, "capabilities: " + ", ".join(str(c) for c in caps)


async def _probe_openai(client: httpx2.AsyncClient, config: ModelSettings) -> tuple[bool, bool | None, str]:
    key = os.environ.get(config.api_key_env) if config.api_key_env else None
    if config.provider == "openai" and config.base_url is None and not key:
        return False, True, f"no API key (set {config.api_key_env})"
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    response = await client.get(f"{(config.base_url or OPENAI_URL).rstrip('/')}/models", headers=headers)
    if response.status_code != 200:
        return False, None, f"server answered HTTP {response.status_code}"
    listed = {str(m.get("id")) for m in response.json().get("data", []) if isinstance(m, dict)}
    known = config.name in listed
    tools = True if config.provider == "openai" else None
    return known, tools, "ok" if known else f"model {config.name} is not listed by the server"


async def probe(alias: str, config: ModelSettings, default: bool) -> ModelStatus:
    """One model's status; never raises (a failed probe is reported as unreachable)."""
    reachable: bool
    tools: bool | None
    try:
        async with httpx2.AsyncClient(timeout=PROBE_TIMEOUT_S) as client:
            if config.provider == "demo":  # scripted, in process: nothing to probe
                reachable, tools, detail = True, True, DEMO_LABEL
            elif config.provider == "ollama":
                reachable, tools, detail = await _probe_ollama(client, config)
            else:
                reachable, tools, detail = await _probe_openai(client, config)
    except (httpx2.HTTPError, ValueError) as exc:
        reachable, tools, detail = False, None, f"unreachable ({type(exc).__name__})"
    return ModelStatus(
        alias=alias,
        provider=config.provider,
        name=config.name,
        default=default,
        tool_mode=config.tool_mode,
        reachable=reachable,
        tool_capable=tools,
        detail=detail,
    )


@router.get("/models", response_model=ModelList, responses=ERROR_RESPONSES)
async def list_models(user: CurrentUser, settings: AppSettings) -> ModelList:
    """Every configured model (``model_override`` may name these aliases only), probed concurrently."""
    copilot = settings.copilot
    statuses = await asyncio.gather(
        *(probe(alias, cfg, alias == copilot.default_model) for alias, cfg in copilot.models.items())
    )
    return ModelList(models=list(statuses))
