"""The embedded store served over the MongoDB wire protocol, for several processes on one machine.

``server.py`` (start here) owns the socket and the connections, ``protocol.py`` the framing,
``commands.py`` the dispatch, ``reads.py``/``writes.py``/``ddl.py`` the commands, ``cursors.py`` the
server-side cursors. Not for production: no authentication, loopback only, one process's memory.
"""

from qdash.db.wire.server import DEFAULT_PORT, BindRefusedError, WireServer

__all__ = ["DEFAULT_PORT", "BindRefusedError", "WireServer"]
