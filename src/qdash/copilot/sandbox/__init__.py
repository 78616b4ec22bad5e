"""copilot/sandbox package."""
