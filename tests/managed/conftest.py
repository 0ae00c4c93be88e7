"""Real servers for the ``realmodel`` tests (tests/real_parts.py: skipped with the reason when
absent, failed under CI)."""

from tests.real_parts import (  # noqa: F401  (fixtures)
    litellm_proxy,
    llama_cpp_python_server,
    llama_server,
)
