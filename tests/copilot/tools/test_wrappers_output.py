"""What the model sees: chart interception, compaction and the size guard."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from pymongo.database import Database

from qdash.copilot.tools.catalog.formatting import shown
from qdash.copilot.tools.jsonsafe import dumps
from qdash.copilot.tools.output import ToolData, output_data
from qdash.copilot.tools.wrappers.charts import SANDBOX_NOTE, intercept_charts
from qdash.copilot.tools.wrappers.compaction import compact, round_sig
from qdash.copilot.tools.wrappers.size_guard import guard_size
from qdash.settings import Settings, load_settings

from .test_executor import make_service, tools_by_name

NOW = dt.datetime(2026, 11, 22, 12, 0, tzinfo=dt.UTC)


async def test_heatmap_chart_bypasses_the_model(
    mongo_db: Database[dict[str, Any]], settings: Settings
) -> None:
    tools = tools_by_name(make_service(mongo_db, settings))
    out = await tools["generate_chip_heatmap"]({})
    body = json.loads(out.model_text)
    assert "chart" not in body and body["chart_id"] == "c1"
    assert body["status"] == "success"
    data = output_data(out)
    assert len(data.charts) == 1
    assert data.charts[0]["data"][0]["z"] == [[1.0, None], [3.0, 4.0]]  # NaN-sanitised
    assert tools.turn.charts == data.charts and data.chart_ids == ["c1"]
    assert '"content": "c1"' in body["chart_placement"]
    assert "heatmap" not in out.model_text


async def test_sandbox_charts_keep_only_figures(
    mongo_db: Database[dict[str, Any]], settings: Settings
) -> None:
    service = make_service(mongo_db, settings)
    tools = tools_by_name(service)
    await tools["generate_chip_heatmap"]({})
    out = await tools["execute_python_analysis"]({"code": "result = ..."})
    body = json.loads(out.model_text)
    assert body["chart"] is None and body["chart_note"] == SANDBOX_NOTE
    assert body["chart_ids"] == ["c2"]
    assert output_data(out) == ToolData(shown=body, charts=[{"data": [{"y": [1, 2]}]}], chart_ids=["c2"])
    assert '"content": "c2"' in body["chart_placement"]


def _never(figure: dict[str, Any]) -> str:
    raise AssertionError(f"no chart to collect here: {figure}")


def test_chart_interception_leaves_chartless_results_alone() -> None:
    result = {"output": "hi", "error": None, "chart": None}
    assert intercept_charts(result, [], _never) == (result, [])
    model, charts = intercept_charts({"output": "", "error": None, "chart": None}, [{"no": "data"}], _never)
    assert charts == [] and "chart_note" not in model
    model, charts = intercept_charts({}, [{"data": "x"}, {"data": [1]}], lambda figure: "c1")
    assert charts == [("c1", {"data": [1]})] and model["chart_id"] == "c1"


def test_round_sig() -> None:
    assert round_sig(45.23456789012) == 45.23
    assert round_sig(5.0) == 5
    assert round_sig(0.000123456) == 0.0001235
    assert round_sig(float("nan")) is None
    assert round_sig(-0.2834567) == -0.2835


def test_compaction_tables_units_and_timestamps() -> None:
    rows = [
        {"qid": str(q), "t1": {"value": 40.123456 + q, "unit": "μs"}, "note": None,
         "at": f"2026-11-0{q + 1}T10:00:00+00:00"}
        for q in range(3)
    ]  # fmt: skip
    out = compact({"rows": rows, "n": 3.0}, "UTC", NOW)
    assert out == {
        "rows": {
            "units": {"t1": "μs"},
            "cols": ["qid", "t1", "at"],
            "rows": [["0", 40.12, "11-01 10:00"], ["1", 41.12, "11-02 10:00"], ["2", 42.12, "11-03 10:00"]],
        },
        "n": 3,
        "timezone": "UTC",  # named once, since the output shows times
    }
    assert compact(out, "UTC", NOW) == out  # idempotent


def test_compaction_keeps_the_digits_a_tool_chose() -> None:
    """A tool's display rounding (GHz to 6 figures, so neighbours rank) survives the model's view;
    any other float is rounded to 4, and a round trip through JSON stays the same number."""
    frequency = shown(8.4795132, "GHz")
    out = compact({"max": ["2", frequency], "raw": 8.4795132, "t1": shown(45.21678, "μs")}, "UTC", NOW)
    assert out == {"max": ["2", 8.47951], "raw": 8.48, "t1": 45.22}
    assert json.loads(dumps(out)) == out and compact(out, "UTC", NOW) == out


def test_timestamps_from_other_years_keep_the_year() -> None:
    out = compact({"a": "2025-12-31T23:00:00Z", "b": "2026-01-01T01:00:00Z"}, "Asia/Tokyo", NOW)
    assert out == {"a": "01-01 08:00", "b": "01-01 10:00", "timezone": "Asia/Tokyo"}  # both in 2026 there
    out = compact({"a": "2025-12-31T10:00:00Z", "b": "20251231-001"}, "UTC", NOW)
    assert out == {"a": "2025-12-31 10:00", "b": "20251231-001", "timezone": "UTC"}
    assert compact({"b": "20251231-001", "n": 1.0}, "UTC", NOW) == {"b": "20251231-001", "n": 1}  # no time


async def test_big_results_are_cut_by_rows_and_stored(
    mongo_db: Database[dict[str, Any]], tmp_path: Any
) -> None:
    settings = load_settings(
        database={"data_dir": str(tmp_path), "mongo_uri": None}, tools={"max_result_chars": 2000}
    )
    service = make_service(mongo_db, settings, session_id="s")
    out = await tools_by_name(service)["big"]({"qid": "1", "last_n": 10})
    assert len(out.model_text) <= 2000
    body = json.loads(out.model_text)
    truncated = body["_truncated"]
    assert truncated["field"] == "items.rows" and truncated["total"] == 1000 and 0 < truncated["kept"] < 1000
    assert truncated["data_key"] == "big"
    assert len(service.data_store().get("big")["items"]) == 1000
    assert body["statistics"] == {"count": 1000}


def _guard(value: dict[str, Any], cap: int) -> dict[str, Any]:
    return guard_size(value, cap, lambda: "key")


json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    st.builds(lambda n: "μ" * n, st.integers(0, 600)),  # long strings, cheap to generate
)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.lists(inner, max_size=30) | st.dictionaries(st.text(max_size=8), inner, max_size=8),
    max_leaves=120,
)


@hsettings(max_examples=60, deadline=None)
@given(st.dictionaries(st.text(max_size=10), json_value, max_size=8), st.integers(200, 5000))
def test_size_guard_always_returns_valid_json_under_the_cap(value: dict[str, Any], cap: int) -> None:
    out = _guard(value, cap)
    text = dumps(out)
    assert len(text) <= cap
    assert json.loads(text) == out
    if len(dumps(value)) <= cap:
        assert out == value


def test_size_guard_order_rows_then_omitted_then_strings() -> None:
    value = {"statistics": {"mean": 1}, "rows": [[i, "x" * 20] for i in range(500)]}
    out = _guard(value, 1000)
    assert out["statistics"] == {"mean": 1}
    assert out["_truncated"]["field"] == "rows" and out["_truncated"]["total"] == 500
    out = _guard({"output": "y" * 5000}, 1000)
    assert out["output"].endswith("chars]") and "… [truncated " in out["output"]
    assert _guard({"error": "z" * 5000}, 500) == {
        "error": "Result too large",
        "data_key": "key",
        "hint": "analyse it with execute_python_analysis",
    }
