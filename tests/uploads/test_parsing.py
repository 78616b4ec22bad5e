"""CSV parsing: detection, typing, and errors that name the line and column."""

from __future__ import annotations

import pyarrow as pa
import pytest

from qdash.settings import UploadSettings
from qdash.uploads import UploadError, parse_csv
from qdash.uploads.parsing import check_name

SETTINGS = UploadSettings()


def test_types_delimiter_and_nulls() -> None:
    raw = b"qid;t1;when;ok;note\n0;50.5;2024-01-01T10:00:00Z;true;a\n1;NaN;2024-01-02;false;\n"
    parsed = parse_csv(raw, SETTINGS)
    assert parsed.delimiter == ";"
    schema = parsed.table.schema
    assert schema.field("qid").type == pa.int64()
    assert schema.field("t1").type == pa.float64()
    assert schema.field("when").type == pa.timestamp("us", tz="UTC")
    assert schema.field("ok").type == pa.bool_()
    assert schema.field("note").type == pa.string()
    assert parsed.table.column("t1").to_pylist() == [50.5, None]


def test_tab_delimiter_bom_and_cp1252() -> None:
    parsed = parse_csv("\ufeffa\tb\n1\tx\n".encode(), SETTINGS)
    assert parsed.delimiter == "\t" and parsed.table.column_names == ["a", "b"]
    latin = parse_csv("name,unit\nT1,\u00b5s\n".encode("cp1252"), SETTINGS)
    assert latin.encoding == "cp1252" and latin.table.column("unit").to_pylist() == ["\u00b5s"]


def test_quoted_fields_with_delimiters() -> None:
    parsed = parse_csv(b'a,b\n"x, y",2\n', SETTINGS)
    assert parsed.table.column("a").to_pylist() == ["x, y"]


def test_ragged_row_names_the_line() -> None:
    with pytest.raises(UploadError) as err:
        parse_csv(b"a,b\n1,2\n3,4,5\n", SETTINGS)
    assert err.value.line == 3 and err.value.status_code == 422
    assert err.value.message.startswith("line 3: 3 fields, expected 2")


def test_duplicate_and_empty_column_names() -> None:
    with pytest.raises(UploadError, match="column name 'a' appears twice") as err:
        parse_csv(b"a,a\n1,2\n", SETTINGS)
    assert err.value.column == "a"
    with pytest.raises(UploadError, match="column 2 has an empty name"):
        parse_csv(b"a,,c\n1,2,3\n", SETTINGS)


def test_caps() -> None:
    small = UploadSettings(max_bytes=1024, max_rows=10, max_columns=2)
    with pytest.raises(UploadError, match="above the limit of 1024 bytes") as err:
        parse_csv(b"a\n" + b"1\n" * 600, small)
    assert err.value.status_code == 413
    with pytest.raises(UploadError, match="more than 10 data rows"):
        parse_csv(b"a\n" + b"1\n" * 11, small)
    with pytest.raises(UploadError, match="3 columns, above the limit of 2"):
        parse_csv(b"a,b,c\n1,2,3\n", small)


def test_empty_binary_and_headless_files() -> None:
    with pytest.raises(UploadError, match="empty"):
        parse_csv(b"\n\n", SETTINGS)
    with pytest.raises(UploadError, match="NUL bytes") as err:
        parse_csv(b"PK\x03\x04\x00\x00", SETTINGS)
    assert err.value.status_code == 415
    with pytest.raises(UploadError, match="no data rows"):
        parse_csv(b"a,b\n", SETTINGS)


def test_names() -> None:
    assert check_name("t1_fits") == "t1_fits"
    for bad in ("", "1abc", "a-b", "x" * 65, "__class__"):
        with pytest.raises(UploadError, match="invalid upload name"):
            check_name(bad)
