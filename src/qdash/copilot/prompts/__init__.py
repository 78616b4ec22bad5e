"""Prompts for chat and analysis mode. Read ``parts.py``, then ``chat.py`` and ``analysis.py``."""

from qdash.copilot.prompts.analysis import (
    AnalysisContext,
    build_analysis_instructions,
    images_note,
    render_analysis_context,
)
from qdash.copilot.prompts.chat import build_chat_instructions, chat_context_note
from qdash.copilot.prompts.knowledge import TaskKnowledge, load_task_knowledge

__all__ = [
    "AnalysisContext",
    "TaskKnowledge",
    "build_analysis_instructions",
    "build_chat_instructions",
    "chat_context_note",
    "images_note",
    "load_task_knowledge",
    "render_analysis_context",
]
