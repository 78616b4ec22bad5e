"""copilot/engine/providers package."""
