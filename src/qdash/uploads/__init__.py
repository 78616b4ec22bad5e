"""Uploaded CSV tables: parsed and typed once at upload, stored as Parquet per session.

Public names: :class:`UploadStore` (save/list/delete/load_rows), :func:`parse_csv`,
:class:`UploadError` (``status_code`` is the 4xx to answer), :class:`UploadInfo`.
"""

from __future__ import annotations

from qdash.uploads.parsing import ParsedTable, UploadError, parse_csv
from qdash.uploads.store import COLLECTION, UploadInfo, UploadStore

__all__ = ["COLLECTION", "ParsedTable", "UploadError", "UploadInfo", "UploadStore", "parse_csv"]
