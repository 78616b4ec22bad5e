"""Models from configuration: one :class:`Model` per alias, each described by a :class:`ModelConfig`.

Why plain dataclasses: the engine reads no application settings; the application turns its own
configuration into ``ModelConfig`` values (QDash: ``qdash.copilot.engine_config``).

Why a registry: clients are costly (connection pools) and fallbacks/capabilities are learnt per
model, so both live as long as the process; a request picks a model by alias only (never by a raw
name or URL from the user). The registry closes the clients it built (``aclose``, at shutdown).

Why aiohttp under the SDK (``openai.DefaultAioHttpClient``, the SDK's documented option "for
improved concurrency performance"): with 100 concurrent streams the default httpx2 pool polls every
idle keep-alive connection on each request and response close, and its pure-Python HTTP parsing
reads each streamed event; aiohttp's C parser and pool cut the event-loop CPU of a light chat turn
from 18.6 to about 10 ms (``bench/concurrency.py``). Errors still surface as the SDK's exception
classes (the transport maps aiohttp's to httpx2's).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import httpx2

from qdash.engine.providers.base import Model, ModelError, Pricing

if TYPE_CHECKING:
    import openai

DEFAULT_OLLAMA_URL = "http://localhost:11434/v1"
CONNECT_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class ModelConfig:
    """One model: where it is served, how it is spoken to and what it costs."""

    name: str
    """The provider's model name, e.g. ``gpt-5-mini``."""
    provider: str = "openai"
    """``openai``, ``ollama`` or ``openai_compatible``; another name needs a registry builder."""
    api_style: Literal["responses", "chat_completions"] = "responses"
    base_url: str | None = None
    api_key_env: str | None = "OPENAI_API_KEY"
    """The environment variable holding the key (never the key itself)."""
    temperature: float | None = None
    max_output_tokens: int = 16384
    reasoning_effort: str | None = None
    tool_mode: Literal["auto", "native", "text"] = "auto"
    read_timeout_s: float = 60.0
    price_input_per_mtok: float = 0.0
    price_cached_input_per_mtok: float = 0.0
    price_output_per_mtok: float = 0.0
    extra_body: dict[str, Any] = field(default_factory=dict)
    chat_reasoning_field: str | None = None
    """Chat: the key the server's reasoning comes and goes back under (``ChatOptions``)."""
    chat_thought_signatures: bool = False
    """Chat: keep Gemini's thought signatures on tool calls and send them back."""
    responses_bare_function_calls: bool = False
    """Responses: send function calls back with ``status: null`` and without item ids (vLLM)."""


ModelBuilder = Callable[[str, ModelConfig], Model]
"""Builds a model that needs no client (e.g. the demo model) from its alias and configuration."""


def build_client(
    config: ModelConfig, *, max_retries: int = 2, http_client: httpx2.AsyncClient | None = None
) -> openai.AsyncOpenAI:
    """An ``AsyncOpenAI`` client for one configured model (base URL, key from env, timeouts).

    The SDK is imported here, on the first model a process builds: it costs about 1.5 s of CPU, which
    a server on the demo model, and every CLI command that builds no model, never pays.
    """
    import openai

    base_url = config.base_url or (DEFAULT_OLLAMA_URL if config.provider == "ollama" else None)
    api_key = os.environ.get(config.api_key_env) if config.api_key_env else None
    if not api_key:
        if config.provider == "openai" and base_url is None:
            # A configuration error: not retryable (retrying cannot make a key appear).
            raise ModelError(
                "model_error",
                f"No API key configured for this model (set the {config.api_key_env} environment variable).",
            )
        api_key = "unused"  # local servers ignore the key, the SDK needs one
    return openai.AsyncOpenAI(
        api_key=api_key,
        base_url=base_url,
        timeout=httpx2.Timeout(config.read_timeout_s, connect=CONNECT_TIMEOUT_S),
        max_retries=max_retries,
        http_client=http_client if http_client is not None else openai.DefaultAioHttpClient(),
    )


def build_model(
    alias: str,
    config: ModelConfig,
    *,
    client: openai.AsyncOpenAI | None = None,
    max_retries: int = 2,
    http_client: httpx2.AsyncClient | None = None,
) -> Model:
    """The adapter stack for one configured model (on ``client``, or a new one from ``config``)."""
    from qdash.engine.providers.chat import ChatCompletionsModel, ChatOptions
    from qdash.engine.providers.ollama import AdaptiveToolModel, ollama_probe
    from qdash.engine.providers.responses import ResponsesModel
    from qdash.engine.providers.text_protocol import TextProtocolModel

    client = client or build_client(config, max_retries=max_retries, http_client=http_client)
    pricing = Pricing(
        input=config.price_input_per_mtok,
        cached_input=config.price_cached_input_per_mtok,
        output=config.price_output_per_mtok,
    )
    local = config.provider == "ollama"
    # Only OpenAI combines a structured-output format with tools; Ollama and vLLM apply it to the
    # whole output, which blocks tool calls, so there it is sent on the tool-free request only.
    format_with_tools = config.provider == "openai"
    if config.api_style == "responses" and config.provider != "ollama":
        # Ollama always goes through Chat (its /v1/responses is experimental).
        responses = ResponsesModel(
            client,
            config.name,
            key=alias,
            temperature=config.temperature,
            max_output_tokens=config.max_output_tokens,
            reasoning_effort=config.reasoning_effort,
            pricing=pricing,
            extra_body=config.extra_body,
            local=local,
            format_with_tools=format_with_tools,
            bare_function_calls=config.responses_bare_function_calls,
        )
        return TextProtocolModel(responses) if config.tool_mode == "text" else responses
    options = ChatOptions(
        send_tool_choice=not local,
        send_strict=config.provider == "openai",
        token_param="max_completion_tokens" if config.provider == "openai" else "max_tokens",
        format_with_tools=format_with_tools,
        local=local,
        reasoning_field=config.chat_reasoning_field,
        thought_signatures=config.chat_thought_signatures,
    )
    native = ChatCompletionsModel(
        client,
        config.name,
        key=alias,
        options=options,
        temperature=config.temperature,
        max_output_tokens=config.max_output_tokens,
        pricing=pricing,
        extra_body=config.extra_body,
    )
    probe = ollama_probe(str(client.base_url), config.name) if local and config.tool_mode == "auto" else None
    return AdaptiveToolModel(native, tool_mode=config.tool_mode, probe=probe)


class ModelRegistry:
    """The configured models by alias, built lazily and kept for the process."""

    def __init__(
        self,
        models: Mapping[str, ModelConfig],
        *,
        default: str,
        max_retries: int = 2,
        http_client: httpx2.AsyncClient | None = None,
        builders: Mapping[str, ModelBuilder] | None = None,
    ) -> None:
        """``builders`` maps a provider name to how its models are built without an OpenAI client."""
        self._configs = dict(models)
        self._default = default
        self._builders = dict(builders or {})
        self._max_retries = max_retries
        self._http_client = http_client
        self._models: dict[str, Model] = {}
        self._clients: list[openai.AsyncOpenAI] = []

    @property
    def aliases(self) -> list[str]:
        return list(self._configs)

    def get(self, alias: str | None = None) -> Model:
        """The model for ``alias`` (default model when ``None``); unknown alias → ``KeyError``."""
        name = alias or self._default
        if name not in self._configs:
            raise KeyError(f"unknown model '{name}'; configured models: {', '.join(self.aliases)}")
        if name not in self._models:
            config = self._configs[name]
            builder = self._builders.get(config.provider)
            if builder is not None:
                self._models[name] = builder(name, config)
                return self._models[name]
            client = build_client(config, max_retries=self._max_retries, http_client=self._http_client)
            self._clients.append(client)
            self._models[name] = build_model(name, config, client=client)
        return self._models[name]

    async def aclose(self) -> None:
        """Close the clients built so far (their connection pools); later ``get`` builds anew.

        An ``http_client`` handed to the registry belongs to the caller and stays open.
        """
        clients, self._clients, self._models = self._clients, [], {}
        if self._http_client is None:
            for client in clients:
                await client.close()
