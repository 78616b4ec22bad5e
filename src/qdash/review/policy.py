"""The lab's review policy: task knowledge and thresholds, loaded once, applied to any result.

Why one object: the guards, the review configuration (its knowledge version) and the prompt must
read the same knowledge and thresholds; building them from settings in one place keeps a bulk job
from re-reading the YAML per result.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from qdash.copilot.prompts.knowledge import ResultLimits, TaskKnowledge, load_task_knowledge
from qdash.review.config import ReviewConfig, knowledge_version
from qdash.review.guards import GuardReport, run_guards
from qdash.settings import ScoreThreshold, Settings


@dataclass(frozen=True)
class ReviewPolicy:
    """Task knowledge by task name plus the scoring thresholds (stored units)."""

    knowledge: Mapping[str, TaskKnowledge]
    scoring: Mapping[str, ScoreThreshold]

    @classmethod
    def from_settings(cls, settings: Settings) -> ReviewPolicy:
        return cls(load_task_knowledge(settings.config_dir), settings.scoring)

    def limits(self, task_name: str) -> ResultLimits:
        entry = self.knowledge.get(task_name)
        return entry.review if entry is not None else ResultLimits()

    def guards(self, result: Mapping[str, Any]) -> GuardReport:
        """The guards on one task result document."""
        return run_guards(result, self.limits(str(result.get("name") or "")), self.scoring)

    def config(self, task_name: str, model: str, provider: str) -> ReviewConfig:
        """The configuration key of a review of ``task_name`` by ``model``."""
        return ReviewConfig(model, provider, knowledge_version(self.knowledge.get(task_name), self.scoring))
