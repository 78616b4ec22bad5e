"""copilot/engine package."""
