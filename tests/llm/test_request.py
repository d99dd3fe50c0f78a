"""Tests for declinecraft.llm.request: a request, its body per backend and the endpoint's identity."""

from __future__ import annotations

from pathlib import Path

import pytest

from declinecraft.llm.client import Client, LLMError
from declinecraft.llm.request import Request, endpoint_identity, request_body
from tests.support import model_specs


class TestRequestBody:
    @pytest.mark.parametrize("budget", [-1, 0])
    def test_budget_below_one(self, budget: int) -> None:
        """An output budget of -1 or 0 (no limit, to some servers) never becomes a request body."""
        with pytest.raises(LLMError, match=rf"model 'fake': max_tokens {budget} is not an output budget"):
            request_body(model_specs.spec(), Request.from_text("q", max_tokens=budget))

    def test_choices_per_backend(self) -> None:
        """Allowed answers become a grammar on llama.cpp, structured outputs on vLLM, nothing on a
        hosted API; a request without them has neither field."""
        request = Request.from_text("q", max_tokens=4, choices=("0.0", "0.5"))
        _, local = request_body(model_specs.spec(backend="llamacpp"), request)
        assert local["grammar"] == 'root ::= "0.0" | "0.5"'
        _, vllm = request_body(model_specs.spec(), request)
        assert vllm["structured_outputs"] == {"choice": ["0.0", "0.5"]} and "grammar" not in vllm
        _, hosted = request_body(model_specs.spec(backend="openai", base_url="http://x/v1"), request)
        assert "grammar" not in hosted and "structured_outputs" not in hosted
        _, free = request_body(model_specs.spec(backend="llamacpp"), Request.from_text("q", max_tokens=4))
        assert "grammar" not in free


class TestRequest:
    def test_from_prompt(self, tmp_path: Path) -> None:
        """A rendered template carries its version into the key."""
        from declinecraft.core import prompts

        a = prompts.parse("---\nQ: {q}\n", path=tmp_path / "a.txt")
        b = prompts.parse("---\nQuestion: {q}\n", path=tmp_path / "a.txt")
        ra = Request.from_prompt(a, {"q": "x"}, max_tokens=5, system="sys")
        assert ra.messages == ({"role": "system", "content": "sys"}, {"role": "user", "content": "Q: x"})
        assert ra.prompt_version == a.version and ra.temperature == 0.0
        c = Client(model_specs.spec(), None, ["http://127.0.0.1:1/v1"])  # type: ignore[arg-type]
        same_text = Request.from_text("Q: x", max_tokens=5, prompt_version=b.version)
        assert c.key(Request.from_text("Q: x", max_tokens=5, prompt_version=a.version)) != c.key(same_text)


class TestEndpointIdentity:
    def test_local_port_free(self) -> None:
        """A local server's port is not part of the identity; the revision is."""
        s = model_specs.spec(revision="abc")
        one, other = ["http://127.0.0.1:8001/v1"], ["http://127.0.0.1:9/v1"]
        assert endpoint_identity(s, one) == endpoint_identity(s, other)
        assert endpoint_identity(s)["revision"] == "abc"

    def test_hosted_url(self) -> None:
        """A hosted API is identified by its base URL too."""
        s = model_specs.spec(backend="openai", base_url="https://openrouter.ai/api/v1/")
        assert endpoint_identity(s)["base_url"] == "https://openrouter.ai/api/v1"
