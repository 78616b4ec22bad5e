"""HTTP API for the QDash dashboard. Read ``app.py`` first, then ``routers/``."""
