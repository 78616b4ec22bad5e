"""Mapping of ``openai`` SDK exceptions onto :class:`ModelError`, shared by both OpenAI-wire adapters.

Why one place: the error code the user sees (rate_limited, timeout, …), whether the loop may replay a
round, and the scrubbing of keys and URLs from provider messages must not differ between wires.
"""

from __future__ import annotations

import re
import socket

import httpx2
import openai

from qdash.engine.providers.base import ModelError
from qdash.logging import redact_text

_URL = re.compile(r"https?://\S+")
_MAX_DETAIL = 300


def safe_detail(text: str) -> str:
    """Provider text made safe to show: no URLs, no secrets, bounded length."""
    cleaned = _URL.sub("<url>", redact_text(text)).strip()
    return cleaned[:_MAX_DETAIL]


def retry_after_seconds(headers: object) -> float | None:
    """``retry-after-ms`` or ``retry-after`` (seconds) from response headers, if present."""
    get = getattr(headers, "get", None)
    if get is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = get(name)
        if value is None:
            continue
        try:
            return max(0.0, float(value) * scale)
        except ValueError:
            continue
    return None


def from_openai_error(exc: BaseException, *, during_stream: bool) -> ModelError:
    """Translate an SDK exception; ``during_stream`` marks failures after the stream started.

    Failures after a stream started are not retried by the SDK, so they are flagged retryable for
    the loop; errors raised by ``create()`` already went through the SDK's own retries.
    """
    if isinstance(exc, openai.APIConnectionError) and (refused := _connect_failure(exc)) is not None:
        return ModelError(
            "model_unavailable",
            f"Cannot connect to the model server at {_origin(exc)} ({refused}). {_how_to_fix(exc)}",
            retryable=during_stream,
        )
    if isinstance(exc, openai.APITimeoutError):
        return ModelError("timeout", "The model did not answer in time.", retryable=during_stream)
    if isinstance(exc, openai.APIConnectionError):
        return ModelError(
            "model_unavailable",
            f"Could not connect to the model server at {_origin(exc)}. {_how_to_fix(exc)}",
            retryable=during_stream,
        )
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        message = _message_of(exc)
        retry_after = retry_after_seconds(exc.response.headers)
        if status == 429:
            if exc.code == "insufficient_quota":
                # Not a rate limit the user can wait out: report it as a (non-retryable) model error.
                return ModelError("model_error", "The model provider's quota is exhausted.", status=429)
            return ModelError(
                "rate_limited",
                f"Rate limited by the model provider: {message}",
                retry_after=retry_after,
                status=429,
            )
        if status in (401, 403):
            return ModelError("model_error", "The model provider rejected the credentials.", status=status)
        if status >= 500 or status in (408, 409):
            return ModelError(
                "model_unavailable",
                f"The model server failed: {message}",
                retry_after=retry_after,
                status=status,
            )
        return ModelError("model_error", message, status=status)
    if isinstance(exc, openai.APIError):
        # An error payload inside a stream (``data: {"error": …}``).
        return ModelError(
            "model_unavailable", f"The model stream failed: {_message_of(exc)}", retryable=during_stream
        )
    return ModelError("model_error", f"Unexpected model failure ({type(exc).__name__}).")


_LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1", "0.0.0.0"})


def _how_to_fix(exc: openai.APIConnectionError) -> str:
    """A local server is most often just not started; a remote one unreachable or mistyped."""
    url = _url_of(exc)
    if url is not None and url.host in _LOCAL_HOSTS:
        return (
            "Start it (Ollama: `ollama serve`; vLLM: `vllm serve <model>`) or correct the model's "
            "base_url in copilot.models."
        )
    return "Check the network and the model's base_url in copilot.models."


def _connect_failure(exc: BaseException) -> str | None:
    """Why the connection failed (``connection refused``), when an OS error caused it.

    aiohttp under the SDK reports a refused or unresolvable host as a connect *timeout*; the cause
    chain still holds the OS error, which tells the operator that nothing listens there.
    """
    deepest: OSError | None = None
    seen: BaseException | None = exc
    for _ in range(10):
        seen = (seen.__cause__ or seen.__context__) if seen is not None else None
        if isinstance(seen, OSError) and not isinstance(seen, TimeoutError):
            deepest = seen
    if deepest is None:
        return None
    if isinstance(deepest, ConnectionRefusedError):
        return "connection refused"
    if isinstance(deepest, socket.gaierror):
        return "host name not found"
    return (deepest.strerror or type(deepest).__name__).lower()


def _url_of(exc: openai.APIConnectionError) -> httpx2.URL | None:
    try:
        return exc.request.url
    except (AttributeError, RuntimeError):
        return None


def _origin(exc: openai.APIConnectionError) -> str:
    """``scheme://host:port`` of the failed request: our own configuration, without credentials."""
    url = _url_of(exc)
    if url is None:
        return "the configured base_url"
    port = f":{url.port}" if url.port else ""
    return f"{url.scheme}://{url.host}{port}"


def _message_of(exc: openai.APIError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return safe_detail(inner["message"])
        if isinstance(inner, str):
            return safe_detail(inner)
    return safe_detail(str(exc.message))
