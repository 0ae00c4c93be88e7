"""Test oracles: independent reference implementations of numbers the package computes another
way, used only to check the package's own forms.

The report computes its metrics one cell at a time (``core/report/running.py``); the oracles
here compute the same numbers from whole lists of rows in the most direct way, and
``tests/core/report/test_running.py`` holds the two equal on seeded random runs. The
comparison's bootstrap is vectorised (``core/compare/paired.py``); its oracle is the plain
loop sr-bench's definition reads. Nothing in ``pytest_srbench`` imports this package.

- ``metrics``: a target's or benchmark row's metric row (``target_metric``), the accuracy
  interval over cases, and the grouping of cells into cases;
- ``continuity``: the continuity block (§5.1) of a target or benchmark row;
- ``routing``: a router target's per-decision breakdown and a preview's routing counts;
- ``bootstrap``: the stratified percentile bootstrap as a plain loop.
"""
