"""The engine's configuration from QDash's settings: every model field and budget carried over."""

from __future__ import annotations

from qdash.copilot.engine_config import model_config, model_registry, run_limits
from qdash.engine.providers.factory import ModelConfig
from qdash.settings import ModelSettings, load_settings
from tests.support.scripted_model import ScriptedModel

FIELDS = {
    "provider": "openai_compatible",
    "name": "Qwen/Qwen3-8B",
    "api_style": "chat_completions",
    "base_url": "http://127.0.0.1:9/v1",
    "api_key_env": None,
    "temperature": 0.2,
    "max_output_tokens": 4096,
    "reasoning_effort": "low",
    "tool_mode": "text",
    "read_timeout_s": 30,
    "price_input_per_mtok": 1.0,
    "price_cached_input_per_mtok": 0.1,
    "price_output_per_mtok": 4.0,
    "extra_body": {"top_k": 20},
}
WIRE = {
    "chat_reasoning_field": "reasoning",
    "chat_thought_signatures": True,
    "responses_bare_function_calls": True,
}


def test_every_model_setting_reaches_the_engine() -> None:
    """Every field but ``multimodal`` (the application's), the wire quirks flattened; none left at
    its default, so a field the mapping dropped would show."""
    settings = ModelSettings(**FIELDS, wire=WIRE)
    assert set(ModelSettings.model_fields) - {"multimodal", "wire"} == set(FIELDS)
    assert model_config(settings) == ModelConfig(**FIELDS, **WIRE)


def test_registry_knows_the_configured_aliases_and_default() -> None:
    settings = load_settings(
        database={"mongo_uri": None},
        copilot={
            "default_model": "b",
            "models": {"a": {"name": "x"}, "b": {"name": "y", "provider": "demo"}},
        },
    )
    seen: list[tuple[str, str]] = []

    def build(alias: str, config: ModelConfig) -> ScriptedModel:
        seen.append((alias, config.name))
        return ScriptedModel([])

    registry = model_registry(settings, builders={"demo": build})
    assert {"a", "b"} <= set(registry.aliases) and registry.aliases == list(settings.copilot.models)
    registry.get()
    assert seen == [("b", "y")]


def test_limits_follow_the_agent_and_tools_sections() -> None:
    settings = load_settings(
        database={"mongo_uri": None},
        agent={"max_rounds": 7, "max_rounds_local": 13, "turn_time_s": 100},
        copilot={"request_timeout_s": 130},
        tools={"max_concurrency": 3, "timeout_s": 9},
    )
    limits = run_limits(settings)
    assert (limits.max_rounds, limits.time_s, limits.final_grace_s) == (7, 100, 30)
    assert (limits.max_concurrency, limits.tool_timeout_s) == (3, 9)
    assert run_limits(settings, local=True).max_rounds == 13
