"""The pure core: models, digests, accounting, statistics, reports and graders.

Nothing under ``pytest_srbench.core`` performs I/O or imports pytest, httpx, jinja2 or
sqlite3; a test (tests/test_layering.py) enforces it.
"""
