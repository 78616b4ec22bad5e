"""copilot/prompts package."""
