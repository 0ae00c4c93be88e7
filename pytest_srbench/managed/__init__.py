"""Real servers other people wrote, built or installed from registry packages and run on
127.0.0.1: llama.cpp's ``llama-server`` with the SmolLM2-135M model, LiteLLM's proxy, and
llama-cpp-python's server. Used by the ``realmodel`` tests and by ``managed`` targets."""
