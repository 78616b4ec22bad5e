"""Framing on a raw socket: the legacy OP_QUERY handshake, OP_MSG with a document sequence, and
messages that break the protocol (the connection is closed, the server keeps serving)."""

from __future__ import annotations

import io
import socket
import struct
from typing import Any

import bson
import pytest

from tests.support.wire_store import WireServer
from tests.support.wire_store.protocol import OP_MSG, OP_QUERY, OP_REPLY, ProtocolError, read_request


def _send(server: WireServer, op_code: int, body: bytes) -> tuple[int, bytes]:
    with socket.create_connection(server.server_address[:2], timeout=5) as sock:
        sock.sendall(struct.pack("<iiii", 16 + len(body), 7, 0, op_code) + body)
        header = sock.recv(16, socket.MSG_WAITALL)
        length, _request_id, response_to, reply_op = struct.unpack("<iiii", header)
        assert response_to == 7
        return reply_op, sock.recv(length - 16, socket.MSG_WAITALL)


def _msg(command: dict[str, Any], **sequences: list[dict[str, Any]]) -> bytes:
    body = struct.pack("<I", 0) + b"\x00" + bson.encode(command)
    for name, docs in sequences.items():
        payload = name.encode() + b"\x00" + b"".join(bson.encode(d) for d in docs)
        body += b"\x01" + struct.pack("<i", 4 + len(payload)) + payload
    return body


def test_legacy_op_query_handshake_gets_an_op_reply(server: WireServer) -> None:
    query = (
        struct.pack("<i", 0) + b"admin.$cmd\x00" + struct.pack("<ii", 0, -1) + bson.encode({"isMaster": 1})
    )
    op, body = _send(server, OP_QUERY, query)
    assert op == OP_REPLY
    flags, cursor_id, _start, returned = struct.unpack_from("<iqii", body)
    reply = bson.decode(body[20:])
    assert (flags, cursor_id, returned) == (0, 0, 1)
    assert reply["ismaster"] is True and reply["maxWireVersion"] == 21 and reply["helloOk"] is True
    assert "logicalSessionTimeoutMinutes" not in reply


def test_op_msg_document_sequence_is_merged_into_the_command(server: WireServer) -> None:
    op, body = _send(server, OP_MSG, _msg({"insert": "c", "$db": "d"}, documents=[{"_id": 1}, {"_id": 2}]))
    assert op == OP_MSG
    assert bson.decode(body[5:]) == {"n": 2, "ok": 1.0}


def test_a_broken_message_closes_only_that_connection(server: WireServer) -> None:
    with socket.create_connection(server.server_address[:2], timeout=5) as sock:
        sock.sendall(struct.pack("<iiii", 16 + 4, 1, 0, 9999) + b"\x00" * 4)
        assert sock.recv(16) == b""  # closed by the server
    op, _ = _send(server, OP_MSG, _msg({"ping": 1, "$db": "admin"}))
    assert op == OP_MSG


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        (struct.pack("<iiii", 8, 1, 0, OP_MSG), "length 8 is out of range"),
        (struct.pack("<iiii", 40, 1, 0, OP_MSG) + b"\x00" * 3, "inside a message body"),
        (struct.pack("<iiii", 21, 1, 0, OP_MSG) + b"\x00\x00\x00\x00\x07", "malformed message"),
        (b"\x10\x00", "inside a message header"),
    ],
)
def test_malformed_frames_are_protocol_errors(raw: bytes, error: str) -> None:
    with pytest.raises(ProtocolError, match=error):
        read_request(io.BytesIO(raw))


def test_end_of_stream_between_messages_is_not_an_error() -> None:
    assert read_request(io.BytesIO(b"")) is None


def test_more_to_come_is_executed_without_a_reply(server: WireServer) -> None:
    body = (
        struct.pack("<I", 2) + b"\x00" + bson.encode({"insert": "c", "$db": "d", "documents": [{"_id": 9}]})
    )
    with socket.create_connection(server.server_address[:2], timeout=5) as sock:
        sock.sendall(struct.pack("<iiii", 16 + len(body), 1, 0, OP_MSG) + body)
    _op, reply = _send(server, OP_MSG, _msg({"count": "c", "$db": "d"}))
    assert bson.decode(reply[5:])["n"] == 1
