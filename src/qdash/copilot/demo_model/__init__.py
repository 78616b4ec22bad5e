"""The demo model (``provider: demo``): scripted answers through the real tools, sandbox and charts.

Read ``model.py`` (the Model), then ``plans.py`` (which tools for which question, and the answer
written from their outputs), ``questions.py`` (keyword reading) and ``fallback.py`` (when it is the
default: only when no real model is usable).
"""

from qdash.copilot.demo_model.fallback import DEMO_ALIAS, demo_is_default, model_usable, with_demo_model
from qdash.copilot.demo_model.model import DEMO_LABEL, DemoModel

__all__ = ["DEMO_ALIAS", "DEMO_LABEL", "DemoModel", "demo_is_default", "model_usable", "with_demo_model"]
