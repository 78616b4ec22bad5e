"""A test double: the embedded store served over the MongoDB wire protocol, so two API processes
on one machine share it in tests and benchmarks without a MongoDB server (``python -m
tests.support.wire_store``). Several processes in production share MongoDB.

``server.py`` (start here) owns the socket and the connections, ``protocol.py`` the framing,
``commands.py`` the dispatch, ``reads.py``/``writes.py``/``ddl.py`` the commands, ``cursors.py`` the
server-side cursors. Not for production: no authentication, loopback only, one process's memory.
"""

from tests.support.wire_store.server import DEFAULT_PORT, BindRefusedError, WireServer

__all__ = ["DEFAULT_PORT", "BindRefusedError", "WireServer"]
