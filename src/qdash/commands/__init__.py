"""The ``qdash`` command groups, one module each, apart from the code they drive.

A command parses options, opens its data through ``qdash.route`` (here, or through the running
``qdash serve``) and prints; the domain packages it calls (``review``, ``actions``, ``evaluation``,
``demo``, ``db`` …) never import a command (``tests/test_architecture.py``). ``qdash.cli`` lists the
groups and imports a module only when its command runs, so this file stays empty of imports.
"""
