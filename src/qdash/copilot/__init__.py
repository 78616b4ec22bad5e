"""copilot package."""
