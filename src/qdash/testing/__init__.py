"""Test support: the strict fake LLM server and its pytest fixtures (imported by tests and bench/ only)."""
