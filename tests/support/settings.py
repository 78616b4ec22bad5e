"""Settings that point models at the fake LLM server, for tests and benchmarks.

Why one builder: every test or benchmark that runs the real assistant against the fake writes the
same settings (the embedded store in a temporary folder, a ``copilot.models`` entry whose
``base_url`` is the fake), and a copy that drifts (a forgotten ``mongo_uri: None``) would quietly
reach for a real database instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from qdash.settings import Settings, load_settings


def fake_model(
    base_url: str, name: str = "gpt-5-mini", *, key_env: str | None = None, **fields: Any
) -> dict[str, Any]:
    """One ``copilot.models`` entry served at ``base_url`` (provider ``openai`` unless ``fields`` say
    otherwise); ``key_env`` names the environment variable holding its key (``None``: no key)."""
    return {"provider": "openai", "name": name, "base_url": base_url, "api_key_env": key_env, **fields}


def settings_on_fake(data_dir: Path | str, models: dict[str, dict[str, Any]], **sections: Any) -> Settings:
    """Settings on the embedded store in ``data_dir`` whose default model is the first of ``models``.

    ``sections`` are further settings sections (``agent={...}``); a ``copilot`` section is merged
    with the models.
    """
    copilot = {"default_model": next(iter(models)), "models": models, **sections.pop("copilot", {})}
    return load_settings(database={"data_dir": str(data_dir), "mongo_uri": None}, copilot=copilot, **sections)
