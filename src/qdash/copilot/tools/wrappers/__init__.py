"""The logic of the wrappers every tool call passes through; their order is ``pipeline.py``'s.

Each module is one concern with plain functions that take the turn's state or the result and
nothing else, so each is tested alone (``tests/copilot/tools/test_wrappers_*``); ``pipeline.py``
wraps each in a guard or step and lists them in order.
"""
