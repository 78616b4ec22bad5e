"""The wrappers every tool call passes through, in the order of tools.md §4.1.

breaker → rate limit → execute → data store / chart interception → compaction → size guard.
Each module is one concern with plain functions; ``executor.py`` composes them.
"""
