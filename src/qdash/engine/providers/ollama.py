"""Ollama: capability detection and the choice between native tools and the text protocol.

Why detection and not configuration alone: whether a local model supports tools depends on the
model file, not the server, and a wrong guess costs a 400 on every request. We ask ``/api/version``
and ``/api/show`` once per (server, model), cache the verdict, and still switch to the text protocol
when a request fails with "does not support tools" (older servers without ``capabilities``).
``tool_mode`` in the config overrides detection.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Literal

import httpx2

from qdash.engine.items import ModelResponse
from qdash.engine.providers.base import (
    DeltaSink,
    Model,
    ModelError,
    ModelIdentity,
    ModelRequest,
)
from qdash.engine.providers.text_protocol import TextProtocolModel
from qdash.logging import get_logger

log = get_logger(__name__)

ToolMode = Literal["auto", "native", "text"]
CAPABILITIES_VERSION = (0, 6, 4)


@dataclass(frozen=True)
class OllamaInfo:
    """What the server told us about one model (``None`` = not reported)."""

    version: str | None
    capabilities: tuple[str, ...] | None

    @property
    def supports_tools(self) -> bool | None:
        return None if self.capabilities is None else "tools" in self.capabilities


_cache: dict[tuple[str, str], OllamaInfo] = {}
_locks: dict[tuple[str, str], asyncio.Lock] = {}


def native_root(base_url: str) -> str:
    """``http://host:11434/v1`` → ``http://host:11434`` (the native API lives at the root)."""
    root = base_url.rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


def _version_tuple(text: str) -> tuple[int, ...]:
    parts: list[int] = []
    for piece in text.split("-", maxsplit=1)[0].split("."):
        if not piece.isdigit():
            break
        parts.append(int(piece))
    return tuple(parts)


async def detect(
    base_url: str, model: str, *, http: httpx2.AsyncClient | None = None, timeout_s: float = 5.0
) -> OllamaInfo:
    """Ask the server (once per base URL and model) for its version and the model's capabilities."""
    root = native_root(base_url)
    key = (root, model)
    if key in _cache:
        return _cache[key]
    lock = _locks.setdefault(key, asyncio.Lock())
    async with lock:
        if key in _cache:
            return _cache[key]
        owned = http is None
        client = http or httpx2.AsyncClient(timeout=timeout_s)
        try:
            info = await _query(client, root, model)
        finally:
            if owned:
                await client.aclose()
        _cache[key] = info
        log.info("ollama_capabilities", model=model, version=info.version, capabilities=info.capabilities)
        return info


async def _query(client: httpx2.AsyncClient, root: str, model: str) -> OllamaInfo:
    version: str | None = None
    try:
        response = await client.get(f"{root}/api/version")
        if response.status_code == 200:
            version = str(response.json().get("version") or "") or None
    except (httpx2.HTTPError, ValueError):
        return OllamaInfo(None, None)
    if version is not None and _version_tuple(version) < CAPABILITIES_VERSION:
        return OllamaInfo(version, None)
    try:
        response = await client.post(f"{root}/api/show", json={"model": model})
        if response.status_code != 200:
            return OllamaInfo(version, None)
        caps = response.json().get("capabilities")
    except (httpx2.HTTPError, ValueError):
        return OllamaInfo(version, None)
    return OllamaInfo(version, tuple(str(c) for c in caps) if isinstance(caps, list) else None)


def clear_capability_cache() -> None:
    """Forget detected capabilities (tests; a model was re-pulled)."""
    _cache.clear()
    _locks.clear()


def _no_tools(error: ModelError) -> bool:
    return error.status == 400 and "does not support tools" in error.detail


class AdaptiveToolModel(ModelIdentity):
    """Native tools when the model supports them, else the text protocol; decided once, then cached.

    ``probe`` (e.g. Ollama detection) answers True/False/None(unknown); unknown means: try native and
    switch for good on a "does not support tools" 400.
    """

    def __init__(self, native: Model, *, tool_mode: ToolMode = "auto", probe: _Probe | None = None) -> None:
        super().__init__(
            native.name, key=native.key, capabilities=native.capabilities, pricing=native.pricing
        )
        self._native = native
        self._text = TextProtocolModel(native)
        self._probe = probe
        self._use_text: bool | None = {"native": False, "text": True}.get(tool_mode)

    @property
    def uses_text_protocol(self) -> bool | None:
        """The current verdict (``None`` until the first request decides)."""
        return self._use_text

    async def request(self, request: ModelRequest, on_text: DeltaSink | None = None) -> ModelResponse:
        if self._use_text is None and self._probe is not None:
            supports = await self._probe()
            if supports is not None:
                self._use_text = not supports
        if self._use_text:
            return await self._text.request(request, on_text)
        try:
            return await self._native.request(request, on_text)
        except ModelError as error:
            if not (_no_tools(error) and request.tools):
                raise
            log.info("tool_protocol_fallback", model=self._native.name)
            self._use_text = True
            return await self._text.request(request, on_text)


class _Probe:
    """Callable that reports tool support for one Ollama model (None when unknown)."""

    def __init__(self, base_url: str, model: str, http: httpx2.AsyncClient | None = None) -> None:
        self._base_url = base_url
        self._model = model
        self._http = http

    async def __call__(self) -> bool | None:
        info = await detect(self._base_url, self._model, http=self._http)
        return info.supports_tools


def ollama_probe(base_url: str, model: str, http: httpx2.AsyncClient | None = None) -> _Probe:
    """The detection probe for :class:`AdaptiveToolModel`."""
    return _Probe(base_url, model, http)
