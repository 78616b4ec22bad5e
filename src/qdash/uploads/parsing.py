"""CSV bytes → validated, typed pyarrow table → Parquet bytes.

Why parse here, once, at upload time: the file is treated as data in the API process (never as
code), every problem is reported while the user is still looking at the upload dialog, and the
tools and the sandbox only ever read typed Parquet.
"""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime

import pyarrow as pa
import pyarrow.parquet as pq

from qdash.settings import UploadSettings

ENCODINGS = ("utf-8-sig", "cp1252", "latin-1")
DELIMITERS = ",;\t|"
NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
MAX_PARQUET_BYTES = 15 * 2**20
"""A MongoDB document holds at most 16 MiB; the table must fit in one with its metadata."""
_BOOLS = {"true": True, "false": False, "yes": True, "no": False}
_NULLS = {"", "na", "n/a", "nan", "null", "none", "-"}


class UploadError(ValueError):
    """A bad upload; ``status_code`` is the HTTP status the API should answer with (4xx)."""

    def __init__(
        self, message: str, status_code: int = 422, line: int | None = None, column: str | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        self.line = line
        self.column = column


@dataclass(frozen=True)
class ParsedTable:
    """A parsed upload: the typed table and what was detected."""

    table: pa.Table
    encoding: str
    delimiter: str

    @property
    def columns(self) -> list[dict[str, str]]:
        return [{"name": f.name, "type": str(f.type)} for f in self.table.schema]


def check_name(name: str) -> str:
    """Upload names become ``data["<name>"]`` keys: a letter, then letters, digits, ``_``."""
    if not NAME_RE.match(name or ""):
        raise UploadError(
            f"invalid upload name {name!r}: use a letter followed by up to 63 letters, digits or "
            "underscores (it becomes data['<name>'] in analyses)",
            status_code=400,
        )
    return name


def decode(raw: bytes) -> tuple[str, str]:
    """Text and the encoding that decoded it (UTF-8 with or without BOM first)."""
    if b"\x00" in raw[:4096]:
        raise UploadError(
            "the file contains NUL bytes; upload a text CSV (not Excel or UTF-16)", status_code=415
        )
    for encoding in ENCODINGS:
        try:
            return raw.decode(encoding), encoding
        except UnicodeDecodeError:
            continue
    raise UploadError("cannot decode the file; save it as UTF-8", status_code=415)  # pragma: no cover


def sniff_delimiter(text: str) -> str:
    """The delimiter that splits the header and first lines into the same, largest field count."""
    sample = [line for line in text.splitlines()[:20] if line.strip()]
    if not sample:
        raise UploadError("the file is empty; upload a CSV with a header row", status_code=400)
    best, best_fields = ",", 1
    for delimiter in DELIMITERS:
        counts = {len(row) for row in csv.reader(sample, delimiter=delimiter)}
        if len(counts) == 1 and (fields := counts.pop()) > best_fields:
            best, best_fields = delimiter, fields
    return best


def parse_csv(raw: bytes, settings: UploadSettings) -> ParsedTable:
    """Validate and type a CSV upload; raise :class:`UploadError` naming line and column."""
    if len(raw) > settings.max_bytes:
        raise UploadError(
            f"the file is {len(raw)} bytes, above the limit of {settings.max_bytes} "
            "bytes (uploads.max_bytes); upload fewer rows",
            status_code=413,
        )
    text, encoding = decode(raw)
    delimiter = sniff_delimiter(text)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    try:
        header = [h.strip() for h in next(reader)]
        _check_header(header, settings)
        columns: list[list[str]] = [[] for _ in header]
        for row in reader:
            line = reader.line_num
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != len(header):
                raise UploadError(
                    f"line {line}: {len(row)} fields, expected {len(header)} as in the "
                    "header; check quoting and delimiters",
                    line=line,
                )
            if len(columns[0]) >= settings.max_rows:
                raise UploadError(
                    f"more than {settings.max_rows} data rows (uploads.max_rows); upload fewer rows",
                    status_code=413,
                    line=line,
                )
            for index, cell in enumerate(row):
                columns[index].append(cell.strip())
    except csv.Error as exc:
        raise UploadError(f"line {reader.line_num}: malformed CSV ({exc})", line=reader.line_num) from None
    if not columns[0]:
        raise UploadError("the file has a header but no data rows", status_code=400)
    arrays = [_infer(name, values) for name, values in zip(header, columns, strict=True)]
    return ParsedTable(pa.table(dict(zip(header, arrays, strict=True))), encoding, delimiter)


def _check_header(header: list[str], settings: UploadSettings) -> None:
    if len(header) > settings.max_columns:
        raise UploadError(
            f"{len(header)} columns, above the limit of {settings.max_columns} (uploads.max_columns)",
            status_code=413,
            line=1,
        )
    seen: set[str] = set()
    for position, name in enumerate(header, start=1):
        if not name:
            raise UploadError(
                f"line 1: column {position} has an empty name; name every column",
                line=1,
                column=str(position),
            )
        if name in seen:
            raise UploadError(
                f"line 1: column name {name!r} appears twice; names must be unique", line=1, column=name
            )
        seen.add(name)


def _infer(name: str, values: list[str]) -> pa.Array:
    """The narrowest of int, float, bool, timestamp, string that fits every non-empty cell."""
    cells: list[str | None] = [None if v.lower() in _NULLS else v for v in values]
    present = [c for c in cells if c is not None]
    if not present:
        return pa.array(cells, type=pa.string())
    for convert, arrow_type in (
        (_to_int, pa.int64()),
        (_to_float, pa.float64()),
        (_to_bool, pa.bool_()),
        (_to_time, pa.timestamp("us", tz="UTC")),
    ):
        try:
            converted = [None if c is None else convert(c) for c in cells]
        except (ValueError, OverflowError):
            continue
        return pa.array(converted, type=arrow_type)
    return pa.array(cells, type=pa.string())


def _to_int(value: str) -> int:
    number = int(value)
    if abs(number) >= 2**63:
        raise OverflowError(value)
    return number


def _to_float(value: str) -> float | None:
    number = float(value)
    return None if math.isnan(number) else number


def _to_bool(value: str) -> bool:
    return _BOOLS[value.lower()] if value.lower() in _BOOLS else _raise(value)


def _to_time(value: str) -> datetime:
    """The cell as a UTC datetime; one that leaves years 1–9999 in UTC raises OverflowError (text)."""
    if not value[:4].isdigit():
        raise ValueError(value)
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if parsed.tzinfo is None:
        return parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def _raise(value: str) -> bool:
    raise ValueError(value)


def to_parquet(table: pa.Table) -> bytes:
    """Serialise a table; refuse one that would not fit in a MongoDB document."""
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd")
    data: bytes = sink.getvalue().to_pybytes()
    if len(data) > MAX_PARQUET_BYTES:
        raise UploadError(
            f"the table is {len(data)} bytes as Parquet, above {MAX_PARQUET_BYTES}; "
            "upload fewer rows or columns",
            status_code=413,
        )
    return data
