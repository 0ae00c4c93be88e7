"""Call ids: unique without a system call each, and never shared by a forked child."""

from __future__ import annotations

import os
import re

from pytest_srbench.engine.call_ids import new_call_id


def test_call_ids_are_unique_and_keep_their_shape():
    ids = [new_call_id() for _ in range(10_000)]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"call-[0-9a-f]{32}", call_id) for call_id in ids)


def test_a_forked_child_draws_its_own_prefix():
    mine = new_call_id()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: write its next id and leave at once
        os.write(write, new_call_id().encode())
        os._exit(0)
    os.close(write)
    os.waitpid(pid, 0)
    theirs = os.read(read, 64).decode()
    os.close(read)
    assert re.fullmatch(r"call-[0-9a-f]{32}", theirs)
    assert theirs[:21] != mine[:21]  # another random 64-bit prefix, not the parent's counter
