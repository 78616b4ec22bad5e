"""Test support kept out of the wheel: fixtures, settings on the fake LLM, an in-process scripted
model, the wire-protocol store, an upstream-shaped lab (imported by tests and bench/ only; README.md)."""
