"""The SQL that sums a run's calls up per cell for a recovery plan, shared by both backends
(``?`` placeholders; a PostgreSQL store swaps them for ``%s``). It is written from the pure
core's own definitions (which call statuses are ambiguous or settled, which finish reasons
are allowed), so the database answers exactly what ``summarize_calls`` would.

Only cells whose result is not ``completed`` are summed: a completed cell is excluded
whatever its calls were, and on a finished run such cells are most of the journal. The
database joins and groups; the process receives one row per open cell instead of one per call.
"""

from __future__ import annotations

from collections.abc import Iterable

from pytest_srbench.core.offline.recovery import ALLOWED_FINISH, AMBIGUOUS_CALLS, SETTLED_CALLS


def _texts(values: Iterable[str]) -> str:
    return ", ".join("'" + value.replace("'", "''") + "'" for value in sorted(values))


OPEN_CELL_CALLS = f"""
SELECT c.case_id, c.target_id, count(*),
       max(CASE WHEN c.status IN ({_texts(AMBIGUOUS_CALLS)}) THEN 1 ELSE 0 END),
       max(CASE WHEN c.usage_known = 0 OR c.cost_usd IS NULL OR c.finish_reason IS NULL
                  OR c.finish_reason NOT IN ({_texts(ALLOWED_FINISH)})
                  OR c.status NOT IN ({_texts(SETTLED_CALLS)})
           THEN 1 ELSE 0 END)
FROM calls c LEFT JOIN results r
  ON r.run_id = c.run_id AND r.case_id = c.case_id AND r.target_id = c.target_id
WHERE c.run_id = ? AND (r.status IS NULL OR r.status <> 'completed')
GROUP BY c.case_id, c.target_id
"""

CALL_COSTS = "SELECT cost_usd FROM calls WHERE run_id = ?"
