"""Mapping of ``openai`` SDK exceptions onto :class:`ModelError`, shared by both OpenAI-wire adapters.

Why one place: the error code the user sees (rate_limited, timeout, …), whether the loop may replay a
round, and the scrubbing of keys and URLs from provider messages must not differ between wires.
"""

from __future__ import annotations

import re

import openai

from qdash.copilot.engine.providers.base import ModelError
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
    if isinstance(exc, openai.APITimeoutError):
        return ModelError("timeout", "The model did not answer in time.", retryable=during_stream)
    if isinstance(exc, openai.APIConnectionError):
        return ModelError(
            "model_unavailable", "Could not connect to the model server.", retryable=during_stream
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


def _message_of(exc: openai.APIError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return safe_detail(inner["message"])
        if isinstance(inner, str):
            return safe_detail(inner)
    return safe_detail(str(exc.message))
