"""The comparison helpers SciCode's released test snippets import from
``scicode.compare.cmp``: numbers and arrays are close (``numpy.allclose``), text and flags are
equal, dicts compare key by key, sparse matrices as dense arrays.

Runs inside the sandbox (numpy, scipy; sympy when installed).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse

try:  # sympy symbols compare as their names; without sympy there are none
    from sympy import Symbol
except ImportError:  # pragma: no cover - depends on the environment
    Symbol = None

_SPARSE = (
    scipy.sparse.csr_matrix,
    scipy.sparse.csc_matrix,
    scipy.sparse.bsr_matrix,
    scipy.sparse.coo_matrix,
)


def _is_symbol(value: Any) -> bool:
    return Symbol is not None and isinstance(value, Symbol)


def _named(mapping: dict[Any, Any]) -> dict[Any, Any]:
    """The dict with symbol keys and values replaced by their names."""
    return {
        (str(key) if _is_symbol(key) else key): (str(value) if _is_symbol(value) else value)
        for key, value in mapping.items()
    }


def _close_or_equal(left: Any, right: Any, atol: float = 1e-8, rtol: float = 1e-5) -> bool:
    try:
        return bool(np.allclose(left, right, atol=atol, rtol=rtol))
    except ValueError:  # shapes that do not broadcast, ragged lists: plain equality decides
        return bool(left == right)


def are_dicts_close(
    dict1: dict[Any, Any], dict2: dict[Any, Any], atol: float = 1e-8, rtol: float = 1e-5
) -> bool:
    """Same keys, and every value close (text and symbols equal, sparse matrices densely)."""
    first, second = _named(dict1), _named(dict2)
    if first.keys() != second.keys():
        return False
    for key, left in first.items():
        right = second[key]
        if isinstance(left, str):
            same = left == right
        elif isinstance(left, _SPARSE):
            same = bool(np.allclose(left.toarray(), right.toarray(), atol=atol, rtol=rtol))
        else:
            same = _close_or_equal(left, right, atol=atol, rtol=rtol)
        if not same:
            return False
    return True


def are_csc_matrix_close(matrix1: Any, matrix2: Any) -> bool:
    """Two sparse matrices with close dense values."""
    return bool(np.allclose(matrix1.toarray(), matrix2.toarray()))


def cmp_tuple_or_list(var1: Any, var2: Any) -> bool:
    """Same length, and element by element: dicts close, sparse matrices close, flags equal,
    anything else close (or equal when it cannot be compared numerically)."""
    if len(var1) != len(var2):
        return False
    for left, right in zip(var1, var2, strict=True):
        if isinstance(left, dict):
            same = are_dicts_close(left, right)
        elif isinstance(left, scipy.sparse.csr_matrix | scipy.sparse.csc_matrix):
            same = are_csc_matrix_close(left, right)
        elif isinstance(left, bool):
            same = left == right
        else:
            same = _close_or_equal(left, right)
        if not same:
            return False
    return True
