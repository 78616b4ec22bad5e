"""copilot/tools package."""
