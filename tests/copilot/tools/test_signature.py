"""The curried signature notation: valid forms and errors that name the position."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from qdash.copilot.tools.schema import strict_parameters
from qdash.copilot.tools.signature import SignatureError, TypeExpr, parse_signature
from qdash.evaluation.fake_llm.strict_schema import strict_problem


def test_parses_the_documented_example() -> None:
    sig = parse_signature("(qid::Text)==>(last_n::Int {default:5})==>(::Object)")
    assert [p.name for p in sig.params] == ["qid", "last_n"]
    assert sig.params[1].optional and sig.params[1].default == 5
    assert sig.returns == TypeExpr("Object")


def test_every_type_and_option_becomes_a_strict_schema() -> None:
    sig = parse_signature(
        "( qid :: Text ) ==> (n::Int {default:5, min:1, max:50}) ==> (x::Double {default: 0.5}) ==>"
        "(flag::Bool {default:false}) ==> (qids::[Text] {default:null}) ==> (grid::[[Int]]) ==> (::[Object])"
    )
    model = sig.args_model("my_tool")
    schema = strict_parameters(model, "my_tool")
    assert strict_problem(schema, paranoid=True) is None
    props = schema["properties"]
    assert props["qid"]["type"] == "string"
    assert props["n"] == {
        "type": ["integer", "null"],
        "description": "1-50, default 5",
    }
    assert props["x"]["type"] == ["number", "null"]
    assert props["flag"]["type"] == ["boolean", "null"]
    assert props["qids"]["anyOf"][0]["maxItems"] == 64 and props["qids"]["anyOf"][1] == {"type": "null"}
    assert props["grid"]["items"]["items"]["minimum"] == 0
    assert schema["required"] == ["qid", "n", "x", "flag", "qids", "grid"]
    args = model.model_validate({"qid": "3", "grid": [[1]]})  # the executor drops nulls first
    assert (args.n, args.x, args.flag, args.qids) == (5, 0.5, False, None)  # type: ignore[attr-defined]
    with pytest.raises(ValidationError):
        model.model_validate({"qid": "3", "grid": [], "n": 51})
    with pytest.raises(ValidationError):
        model.model_validate({"qid": "3", "grid": [], "extra": 1})


def test_ints_are_always_bounded() -> None:
    schema = strict_parameters(parse_signature("(n::Int)==>(::Object)").args_model("t"), "t")
    assert schema["properties"]["n"]["description"] == "0-10000"


@pytest.mark.parametrize(
    ("text", "column", "group", "words"),
    [
        ("", 1, 1, "empty signature"),
        ("(qid::Text)", 1, 1, "last group is the return type"),
        ("(qid::Txt)==>(::Object)", 7, 1, "unknown type 'Txt'"),
        ("(qid::Text)=>(::Object)", 12, 1, "expected '==>'"),
        ("(qid::Text)==>(n::Int {default:5)==>(::Object)", 23, 2, "never closed"),
        ("(qid::Text)==>(n::Int {default:abc})==>(::Object)", 23, 2, "key:JSON-value"),
        ("(qid::Text)==>(n::Int {deflt:1})==>(::Object)", 23, 2, "unknown option 'deflt'"),
        ("(::Text)==>(::Object)", 1, 1, "needs a name"),
        ("(Qid::Text)==>(::Object)", 2, 1, "lower snake_case"),
        ("(qid::[Text)==>(::Object)", 12, 1, "expected ']'"),
        ("(q::Object)==>(::Object)", 1, 1, "only allowed as the return type"),
        ("(q::Text)==>(q::Int)==>(::Object)", 13, 2, "declared twice"),
        ("(q::Text {min:1})==>(::Object)", 1, 1, "min/max apply only"),
        ("(n::Int {min:5, max:1})==>(::Object)", 1, 1, "min is greater than max"),
        ("(q::Text)==>(x::Object)", 13, 2, "must be '(::Type)'"),
        ("(q::Text)==>(::Object) junk", 24, 2, "expected '==>'"),
    ],
)
def test_malformed_signatures_name_the_position(text: str, column: int, group: int, words: str) -> None:
    with pytest.raises(SignatureError) as info:
        parse_signature(text)
    assert info.value.column == column, str(info.value)
    assert info.value.group == group, str(info.value)
    assert words in str(info.value)
    assert str(info.value).startswith(f"at column {column} (group {group}): ")
