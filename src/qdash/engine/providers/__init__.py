"""One adapter per wire: Responses (``responses``), Chat Completions (``chat``), the prompt-based tool
protocol (``text_protocol``), Ollama detection (``ollama``); the shared types (``base``) and the
factory (``factory``).

Import from the module that defines a name. Why this package re-exports nothing: importing any of
its modules runs this file first, and re-exports would load the openai SDK (about 1.5 s of CPU)
into every process that only needs ``base``'s types — ``qdash serve`` on the demo model among them.
"""
