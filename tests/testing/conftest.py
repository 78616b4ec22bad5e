"""The fake's own fixtures (the root conftest may enable ``tests.support.pytest_plugin`` for all)."""

from tests.support.pytest_plugin import fake_llm, fake_ollama

__all__ = ["fake_llm", "fake_ollama"]
