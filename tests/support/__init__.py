"""Builders, stand-in servers and scripted models shared by the tests and the benchmarks.

Imported one way, as modules: ``from tests.support import fake_openai, projects``. The modules
that run as processes are started with ``python -m tests.support.<module>`` at the repository root.
"""
