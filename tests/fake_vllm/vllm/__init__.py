"""Part of the stand-in vLLM of tests/fake_vllm (see api_server.py)."""
