"""Part of the stand-in vLLM of tests/support/fake_vllm (see api_server.py)."""
