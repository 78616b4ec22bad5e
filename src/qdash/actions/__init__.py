"""Lab actions: the copilot proposes a write, a person approves it, the server writes, an audit
record remembers (docs/actions.md).

Why a package of its own: the model never writes. Its write tools (``copilot.tools.actions``) only
store a pending approval (``approvals.py``); the write itself runs here, on a person's decision, with
the arguments that person saw (``runner.py``), in upstream's document shapes (``catalog.py``), and
leaves a record in ``copilot_action_audit`` (``audit.py``) that can be listed and undone.
"""
