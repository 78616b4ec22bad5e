"""Tools from typed functions and pydantic argument models."""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel, Field

from qdash.engine import FunctionTool, RunContext, ToolOutput, function_tool


def search(query: str, limit: int = 5, kind: Literal["a", "b"] | None = None) -> dict[str, object]:
    """Search the archive.

    Longer explanation that is not part of the description.

    Args:
        query: what to look for
        limit: maximum hits
    """
    return {"query": query, "limit": limit, "kind": kind}


async def test_schema_from_signature_and_docstring() -> None:
    tool = FunctionTool(search)
    assert tool.name == "search" and tool.description == "Search the archive."
    assert tool.label == "Search"
    props = tool.parameters["properties"]
    assert props["query"] == {"description": "what to look for", "type": "string"}
    assert props["limit"]["type"] == ["integer", "null"] and "Default: 5." in props["limit"]["description"]
    assert tool.parameters["required"] == ["query", "limit", "kind"]


async def test_null_means_default_and_lax_validation() -> None:
    out = await FunctionTool(search)(RunContext(None), {"query": "t1", "limit": None, "kind": None})
    assert json.loads(out.model_text) == {"query": "t1", "limit": 5, "kind": None}
    out = await FunctionTool(search)(RunContext(None), {"query": "t1", "limit": "7", "kind": "a"})
    assert json.loads(out.model_text)["limit"] == 7


async def test_validation_errors_are_structured() -> None:
    out = await FunctionTool(search)(RunContext(None), {"limit": "many"})
    assert out.is_error
    error = json.loads(out.model_text)["error"]
    assert error.startswith("Invalid arguments for search: ")
    assert "query: Field required" in error and "limit: Input should be a valid integer" in error


class Args(BaseModel):
    qid: str = Field(description="qubit id")


async def test_pydantic_args_model_and_decorator() -> None:
    async def fetch(args: Args) -> ToolOutput:
        return ToolOutput(json.dumps({"qid": args.qid}), data=[{"data": []}])

    tool = FunctionTool(fetch, name="get_qubit", label="Fetching qubit", args_model=Args)
    out = await tool(RunContext(None), {"qid": "16"})
    assert out.data == [{"data": []}] and json.loads(out.model_text) == {"qid": "16"}

    @function_tool(label="Adding")
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    assert add.label == "Adding"
    assert (await add(RunContext(None), {"a": 1, "b": 2})).model_text == "3"
