"""The wrappers every tool call passes through, in this order (docs/tools.md).

breaker → rate limit → execute → attachments and answer out → data store / chart interception →
compaction → size guard. Each module is one concern with plain functions that take the turn's state
or the result and nothing else, so each is tested alone (``tests/copilot/tools/test_wrappers_*``);
``executor.py`` composes them.
"""
