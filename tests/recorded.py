"""Where the recorded real OpenAI/Ollama exchanges live: in the repository, so a fresh clone replays them.

See ``tests/fixtures/recorded/README.md`` for their source, licence and what each one shows.
"""

from __future__ import annotations

from pathlib import Path

RECORDED = Path(__file__).resolve().parent / "fixtures" / "recorded"
