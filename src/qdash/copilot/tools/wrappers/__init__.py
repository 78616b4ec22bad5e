"""The wrappers every tool call passes through, in this order (docs/tools.md).

breaker → rate limit → execute → data store / chart interception → compaction → size guard.
Each module is one concern with plain functions; ``executor.py`` composes them.
"""
