"""Where the recorded real OpenAI/Ollama exchanges live: ``shared/`` beside the repository.

CI clones the repository with ``shared/`` next to it, as a developer checkout has it.
``QDASH_RECORDED_FIXTURES`` overrides it.
"""

from __future__ import annotations

import os
from pathlib import Path

_REPO = Path(__file__).resolve().parents[1]
_CANDIDATES = [_REPO.parent / "shared" / "fixtures" / "recorded"]


def recorded_dir() -> Path:
    """The first folder that exists (or the override), else the first candidate (tests then skip)."""
    override = os.environ.get("QDASH_RECORDED_FIXTURES")
    if override:
        return Path(override)
    return next((path for path in _CANDIDATES if path.is_dir()), _CANDIDATES[0])
