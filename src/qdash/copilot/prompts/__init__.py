"""Prompts for chat and analysis mode. Read ``parts.py``, then ``chat.py`` and ``analysis.py``."""

from qdash.copilot.prompts.analysis import (
    ANALYSIS_PROMPT,
    AnalysisContext,
    images_note,
    render_analysis_context,
)
from qdash.copilot.prompts.chat import build_chat_instructions, chat_context_note
from qdash.copilot.prompts.knowledge import TaskKnowledge, load_task_knowledge

__all__ = [
    "ANALYSIS_PROMPT",
    "AnalysisContext",
    "TaskKnowledge",
    "build_chat_instructions",
    "chat_context_note",
    "images_note",
    "load_task_knowledge",
    "render_analysis_context",
]
