"""What a review was made with: model, task-knowledge version and prompt version.

Why a key: a review is only repeated when something that shapes it changed. The same result under the
same configuration is not reviewed twice (unless forced); a new model, edited task knowledge or
thresholds, or a new prompt version gives a new key and therefore a new review beside the old one,
so the two can be compared.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass

from qdash.copilot.prompts.knowledge import TaskKnowledge
from qdash.settings import ScoreThreshold

PROMPT_VERSION = "review-v1"
"""Bump when the review prompt or the verdict schema changes meaning."""


@dataclass(frozen=True)
class ReviewConfig:
    """The configuration part of a review's identity."""

    model: str
    """The model name on the wire (``gpt-5-mini``)."""
    provider: str
    knowledge_version: str
    prompt_version: str = PROMPT_VERSION

    @property
    def key(self) -> str:
        """Short stable hash of the configuration (part of the review's ``_id``)."""
        raw = json.dumps(asdict(self), sort_keys=True).encode()
        return hashlib.sha256(raw).hexdigest()[:16]

    def as_doc(self) -> dict[str, str]:
        return {**asdict(self), "key": self.key}


def knowledge_version(knowledge: TaskKnowledge | None, scoring: Mapping[str, ScoreThreshold]) -> str:
    """Hash of what the guards and the prompt know about a task: its knowledge entry and the thresholds."""
    payload = {
        "knowledge": knowledge.model_dump(mode="json") if knowledge else None,
        "scoring": {name: entry.model_dump(mode="json") for name, entry in sorted(scoring.items())},
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:12]
