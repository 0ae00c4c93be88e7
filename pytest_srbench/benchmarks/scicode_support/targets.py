"""SciCode's numeric targets: the value each released test of a step asserts against.

The HDF5 file holds one group per step (``"<step number>"``, e.g. ``"1.1"``) with one group
per test (``test1``, ``test2``, ...). A test group with one member is that member's value; with
several, the tuple of their values in the file's member order. A value is a dataset (bytes are
decoded as UTF-8 text) or a group:

- holding ``list``: a list of the raw values of that group's members;
- holding ``sparse_matrix``: a SciPy sparse matrix — COO (``row``, ``col``), BSR
  (``blocksize``, ``indices``, ``indptr``) or CSR (``indices``, ``indptr``), with ``data`` and
  ``shape``;
- otherwise a dict: a member group is a sparse matrix (its ``sparse_matrix``), text stays text,
  and a key that reads as a number becomes that float.

Runs inside the sandbox (h5py, numpy, scipy).
"""

from __future__ import annotations

from typing import Any

import h5py
import scipy.sparse


def _plain(dataset: Any) -> Any:
    value = dataset[()]
    return value.decode("utf-8", errors="strict") if isinstance(value, bytes) else value


def _sparse(group: Any) -> Any:
    data, shape = group["data"][()], tuple(group["shape"][()])
    if "row" in group and "col" in group:
        return scipy.sparse.coo_matrix((data, (group["row"][()], group["col"][()])), shape=shape)
    arrays = (data, group["indices"][()], group["indptr"][()])
    if "blocksize" in group:
        blocks = tuple(group["blocksize"][()])
        return scipy.sparse.bsr_matrix(arrays, shape=shape, blocksize=blocks)
    return scipy.sparse.csr_matrix(arrays, shape=shape)


def _mapping(group: Any) -> dict[Any, Any]:
    out: dict[Any, Any] = {}
    for key, member in group.items():
        if isinstance(member, h5py.Group):
            out[key] = _sparse(member["sparse_matrix"])
            continue
        value = member[()]
        if isinstance(value, bytes):
            out[key] = value.decode("utf-8", errors="strict")
            continue
        try:
            out[float(key)] = value
        except ValueError:
            out[key] = value
    return out


def _value(member: Any) -> Any:
    if isinstance(member, h5py.Dataset):
        return _plain(member)
    names = list(member.keys())
    if names and names[0] == "list":
        return [item[()] for item in member["list"].values()]
    if names and names[0] == "sparse_matrix":
        return _sparse(member["sparse_matrix"])
    return _mapping(member)


def read_targets(path: str, step: str, count: int) -> list[Any]:
    """The targets of tests 1..``count`` of ``step``; a missing test is an error naming it."""
    targets: list[Any] = []
    with h5py.File(path, "r") as data:
        for number in range(1, count + 1):
            where = f"{step}/test{number}"
            if where not in data or not isinstance(data[where], h5py.Group):
                raise KeyError(f"{path} holds no targets for {where}")
            members = list(data[where].values())
            if len(members) == 1:
                targets.append(_value(members[0]))
            else:
                targets.append(tuple(_value(member) for member in members))
    return targets
