"""The fake's own fixtures (the root conftest may enable ``qdash.testing.pytest_plugin`` for all)."""

from qdash.testing.pytest_plugin import fake_llm, fake_ollama

__all__ = ["fake_llm", "fake_ollama"]
