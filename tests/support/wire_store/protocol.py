"""MongoDB wire-protocol framing: read one request off a stream, frame one reply.

Only what the pymongo 4.20 driver sends to a server that advertises no compression and no
sessions: OP_MSG (every command; kind-0 body plus kind-1 document sequences such as an ``insert``'s
``documents``) and legacy OP_QUERY, which pymongo still uses for its first ``isMaster``/``hello``.
Each is answered in kind (OP_MSG → OP_MSG, OP_QUERY → OP_REPLY). Anything else is a
``ProtocolError``: the connection is closed, as a MongoDB server would.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any, Protocol

import bson
from bson.binary import UuidRepresentation
from bson.codec_options import CodecOptions

OP_REPLY = 1
OP_QUERY = 2004
OP_MSG = 2013

# What we advertise in ``hello`` and enforce here (MongoDB's own limits).
MAX_BSON_OBJECT_SIZE = 16 * 1024 * 1024
MAX_MESSAGE_SIZE = 48_000_000

_HEADER = struct.Struct("<iiii")  # messageLength, requestID, responseTo, opCode
_INT32 = struct.Struct("<i")
_UINT32 = struct.Struct("<I")
_REPLY_PREFIX = struct.Struct("<iqii")  # responseFlags, cursorID, startingFrom, numberReturned

_CHECKSUM_PRESENT = 1
MORE_TO_COME = 1 << 1

# tz-aware UTC datetimes, as the embedded client takes and returns them; UUIDs as subtype 4 both
# ways, so a value round-trips unchanged whatever the client's own uuidRepresentation is.
CODEC: CodecOptions[dict[str, Any]] = CodecOptions(
    tz_aware=True, uuid_representation=UuidRepresentation.STANDARD
)


class Readable(Protocol):
    def read(self, size: int, /) -> bytes: ...


class ProtocolError(Exception):
    """A message this server cannot frame; the connection is closed."""


@dataclass
class Request:
    """One decoded request: the command document (document sequences merged in as lists)."""

    request_id: int
    op_code: int
    command: dict[str, Any]
    more_to_come: bool = False


def read_request(stream: Readable) -> Request | None:
    """The next request on ``stream``, or ``None`` at a clean end of stream."""
    header = stream.read(_HEADER.size)
    if not header:
        return None
    if len(header) < _HEADER.size:
        raise ProtocolError("connection closed inside a message header")
    length, request_id, _response_to, op_code = _HEADER.unpack(header)
    if not _HEADER.size < length <= MAX_MESSAGE_SIZE:
        raise ProtocolError(f"message length {length} is out of range")
    body = stream.read(length - _HEADER.size)
    if len(body) < length - _HEADER.size:
        raise ProtocolError("connection closed inside a message body")
    try:
        if op_code == OP_MSG:
            return _parse_msg(request_id, body)
        if op_code == OP_QUERY:
            return _parse_query(request_id, body)
    except (bson.InvalidBSON, struct.error, IndexError, ValueError) as exc:
        raise ProtocolError(f"malformed message (opCode {op_code}): {exc}") from None
    raise ProtocolError(f"unsupported opCode {op_code}")


def _parse_msg(request_id: int, body: bytes) -> Request:
    (flags,) = _UINT32.unpack_from(body, 0)
    end = len(body) - (4 if flags & _CHECKSUM_PRESENT else 0)
    pos = 4
    command: dict[str, Any] | None = None
    sequences: dict[str, list[dict[str, Any]]] = {}
    while pos < end:
        kind = body[pos]
        (size,) = _INT32.unpack_from(body, pos + 1)
        if kind == 0:
            command = bson.decode(body[pos + 1 : pos + 1 + size], codec_options=CODEC)
        elif kind == 1:
            name_end = body.index(b"\x00", pos + 5)
            name = body[pos + 5 : name_end].decode("utf-8")
            sequences[name] = bson.decode_all(body[name_end + 1 : pos + 1 + size], codec_options=CODEC)
        else:
            raise ProtocolError(f"unknown OP_MSG section kind {kind}")
        pos += 1 + size
    if command is None:
        raise ProtocolError("OP_MSG without a body section")
    command.update(sequences)
    return Request(request_id, OP_MSG, command, more_to_come=bool(flags & MORE_TO_COME))


def _parse_query(request_id: int, body: bytes) -> Request:
    name_end = body.index(b"\x00", 4)
    namespace = body[4:name_end].decode("utf-8")
    start = name_end + 1 + 8  # numberToSkip, numberToReturn
    (size,) = _INT32.unpack_from(body, start)
    query = bson.decode(body[start : start + size], codec_options=CODEC)
    # Drivers wrap a command with read preference as {"$query": {...}, "$readPreference": ...}.
    command = query["$query"] if isinstance(query.get("$query"), dict) else query
    command.setdefault("$db", namespace.partition(".")[0])
    return Request(request_id, OP_QUERY, command)


def encode(document: dict[str, Any]) -> bytes:
    return bson.encode(document, codec_options=CODEC)


def frame_reply(request: Request, reply: bytes, request_id: int) -> bytes:
    """``reply`` (an encoded document) framed as the answer to ``request``."""
    if request.op_code == OP_QUERY:
        # A command's failure is an ``ok: 0`` document in a plain reply, not the QueryFailure flag.
        payload = _REPLY_PREFIX.pack(0, 0, 0, 1) + reply
        op_code = OP_REPLY
    else:
        payload = _UINT32.pack(0) + b"\x00" + reply
        op_code = OP_MSG
    return _HEADER.pack(_HEADER.size + len(payload), request_id, request.request_id, op_code) + payload
