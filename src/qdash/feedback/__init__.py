"""Answer feedback from the dashboard: list thumbs-down answers and turn them into draft eval cases."""
