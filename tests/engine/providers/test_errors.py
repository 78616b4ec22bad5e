"""SDK exceptions → ModelError: codes, retryability, safe details."""

from __future__ import annotations

import socket

import httpx2
import openai
import pytest

from qdash.engine.events import Failed
from qdash.engine.providers.base import ModelError
from qdash.engine.providers.errors import from_openai_error, retry_after_seconds, safe_detail
from qdash.engine.providers.factory import ModelConfig, build_client


def status_error(
    status: int, body: dict[str, object], headers: dict[str, str] | None = None
) -> openai.APIStatusError:
    request = httpx2.Request("POST", "http://127.0.0.1/v1/responses")
    response = httpx2.Response(status, json=body, headers=headers or {}, request=request)
    classes = {400: openai.BadRequestError, 429: openai.RateLimitError, 500: openai.InternalServerError,
               401: openai.AuthenticationError}  # fmt: skip
    error = body.get("error")
    message = error.get("message") if isinstance(error, dict) else "x"
    # Like the SDK: the exception's body is the inner ``error`` object.
    return classes[status](f"Error code: {status} - {message}", response=response, body=error)


def test_rate_limit_keeps_retry_after_and_scrubs_urls() -> None:
    body = {"error": {"message": "Rate limit reached. Visit https://platform.openai.com/account/rate-limits",
                      "type": "tokens", "param": None, "code": "rate_limit_exceeded"}}  # fmt: skip
    error = from_openai_error(status_error(429, body, {"retry-after-ms": "250"}), during_stream=False)
    assert error.kind == "rate_limited" and error.retry_after == 0.25 and not error.retryable
    assert "https://" not in error.detail and "<url>" in error.detail


def test_quota_is_not_reported_as_a_retryable_rate_limit() -> None:
    quota = "You exceeded your current quota"
    code = "insufficient_quota"
    body = {"error": {"message": quota, "type": code, "param": None, "code": code}}
    error = from_openai_error(status_error(429, body), during_stream=False)
    assert error.kind == "model_error"


def test_auth_and_server_errors() -> None:
    leaked = {"error": {"message": "Incorrect API key provided: sk-abcdefghijkl"}}
    auth = from_openai_error(status_error(401, leaked), during_stream=False)
    assert auth.kind == "model_error" and "sk-" not in auth.detail
    server = from_openai_error(status_error(500, {"error": {"message": "boom"}}), during_stream=False)
    assert server.kind == "model_unavailable" and server.detail == "The model server failed: boom"


def test_timeouts_mid_stream_are_retryable_for_the_loop() -> None:
    request = httpx2.Request("POST", "http://127.0.0.1/v1/responses")
    assert from_openai_error(openai.APITimeoutError(request), during_stream=True).retryable
    assert not from_openai_error(openai.APITimeoutError(request), during_stream=False).retryable


def test_helpers() -> None:
    assert retry_after_seconds({"retry-after": "2"}) == 2.0
    assert retry_after_seconds({}) is None
    assert safe_detail("key sk-ABCDEFGHIJKLMNOP at http://x.y/z") == "key *** at <url>"


def _closed_port() -> int:
    """A loopback port nothing listens on (connections to it are refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_refused_connection_names_the_server_and_how_to_start_it() -> None:
    """The aiohttp transport reports a refused connection as a timeout; say what really happened."""
    port = _closed_port()
    config = ModelConfig(
        provider="ollama", name="qwen3", api_style="chat_completions", base_url=f"http://127.0.0.1:{port}/v1"
    )
    client = build_client(config, max_retries=0)
    try:
        with pytest.raises(openai.APIConnectionError) as caught:
            await client.chat.completions.create(model="qwen3", messages=[{"role": "user", "content": "hi"}])
    finally:
        await client.close()
    error = from_openai_error(caught.value, during_stream=False)
    assert error.kind == "model_unavailable" and not error.retryable
    assert error.detail.startswith(f"Cannot connect to the model server at http://127.0.0.1:{port}")
    assert "ollama serve" in error.detail and "base_url" in error.detail
    assert "in time" not in error.detail


def test_a_missing_key_is_not_retryable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelError) as caught:
        build_client(ModelConfig("gpt-5-mini"))
    assert caught.value.kind == "model_error"
    assert not Failed("run_chat", caught.value.detail, caught.value.kind).retryable
