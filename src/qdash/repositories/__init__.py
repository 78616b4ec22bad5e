"""repositories package."""
