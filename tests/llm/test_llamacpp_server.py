"""Tests for declinecraft.llm.llamacpp_server: the embedded llama.cpp server answers a prompt the same
way whatever it served before."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from declinecraft.core import paths, registry
from declinecraft.llm import body_fields, client, serve
from declinecraft.llm.llamacpp_server import aligned_reuse

ROOT = paths.find_root(Path(__file__))


class TestAlignedReuse:
    def test_rounds_down_to_whole_batches(self) -> None:
        """A 10-token shared prefix with batch 4 reuses 8 tokens: two whole batches."""
        cached = list(range(20))
        prompt = list(range(10)) + [99, 98, 97]
        assert aligned_reuse(cached, prompt, cached_prompt_len=20, batch=4) == 8

    def test_never_reuses_generated_tokens(self) -> None:
        """Tokens past the previous prompt were decoded one by one: they are never reused."""
        cached = list(range(20))  # the previous prompt was 6 tokens, the rest was generated
        prompt = list(range(15))
        assert aligned_reuse(cached, prompt, cached_prompt_len=6, batch=4) == 4

    def test_last_prompt_token_is_evaluated(self) -> None:
        """The same prompt again still evaluates its last token (its logits start the answer)."""
        prompt = list(range(8))
        assert aligned_reuse(prompt, prompt, cached_prompt_len=8, batch=4) == 4
        assert aligned_reuse(prompt, prompt, cached_prompt_len=8, batch=8) == 0

    def test_no_common_prefix(self) -> None:
        assert aligned_reuse([1, 2, 3], [4, 5, 6], cached_prompt_len=3, batch=1) == 0


class TestFlavours:
    def test_default_is_aligned(self) -> None:
        """Runs use the batch-aligned server (deterministic, and it reuses shared prompt prefixes)
        unless a benchmark asks for another flavour; the flavour is part of every llama.cpp call's
        cache key."""
        assert serve.LLAMACPP_FLAVOUR == "aligned"
        spec = registry.ModelSpec(id="x", backend="llamacpp", served_name="x", gguf={"module": "m", "file": "f"})
        assert client.endpoint_identity(spec)["server"] == f"aligned:{serve.PROMPT_BATCH}"
        hosted = registry.ModelSpec(id="y", backend="openai", served_name="y", base_url="http://h/v1")
        assert "server" not in client.endpoint_identity(hosted)

    def test_missing_binary_names_the_make_target(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        spec = registry.ModelSpec(id="x", backend="llamacpp", served_name="x", gguf={"module": "m", "file": "f"})
        monkeypatch.setattr(serve, "llama_server_binary", lambda: tmp_path / "llama-server")
        monkeypatch.setattr(serve, "gguf_path", lambda spec, cache_dir: tmp_path / "m.gguf")
        with pytest.raises(serve.ServeError, match="make llama-server"):
            serve.server_command(spec, 1, tmp_path, flavour="llama-server")

    def test_unknown_flavour_refused(self) -> None:
        spec = registry.ModelSpec(id="x", backend="llamacpp", served_name="x", gguf={"module": "m", "file": "f"})
        with pytest.raises(serve.ServeError, match="flavour"):
            serve.server_command(spec, 1, Path("/tmp"), flavour="fast")


@pytest.mark.slow
def test_answer_does_not_depend_on_history(tmp_path: Path) -> None:
    """A prompt sharing a long prefix with the one before it gets the same answer as on a fresh
    server (prompt batch 16, so the shared prefix spans several batches and a partial one)."""
    spec = registry.get_model(ROOT / "params" / "models.yaml", "smollm2-135m")
    cache_dir = paths.cache_dir(ROOT)
    shared = "Here is a list of Minecraft blocks: " + ", ".join(f"block number {i}" for i in range(40)) + ". "
    first = {"messages": [{"role": "user", "content": shared + "Which block comes first?"}]}
    second = {"messages": [{"role": "user", "content": shared + "Name the last block of the list."}]}

    def ask(base_url: str, body: dict) -> str:
        reply = httpx.post(
            f"{base_url}/chat/completions",
            timeout=300,
            json={**body, "model": spec.served_name, "temperature": 0.0, "max_tokens": 24},
        )
        reply.raise_for_status()
        return reply.json()["choices"][0]["message"]["content"]

    with serve.serve(spec, cache_dir, reuse=False, prompt_batch=16, log_dir=tmp_path) as fresh:
        alone = ask(fresh.base_url, second)
    with serve.serve(spec, cache_dir, reuse=False, prompt_batch=16, log_dir=tmp_path) as used:
        ask(used.base_url, first)
        after = ask(used.base_url, second)
        again = ask(used.base_url, second)
    assert after == alone and again == alone


def test_grammar_constrains_the_answer(tmp_path: Path) -> None:
    """The judge's constrained re-ask on the real server: asked for a score outside the scale, the
    model can only answer one of the allowed strings (``llm.choice_constraint``)."""
    spec = registry.get_model(ROOT / "params" / "models.yaml", "smollm2-135m")
    choices = ("0.0", "0.5", "1.0")
    body = {
        "messages": [{"role": "user", "content": "Reply with the number 1.5 and nothing else."}],
        "model": spec.served_name,
        "temperature": 0.0,
        "max_tokens": 8,
        **body_fields.choice_constraint(spec, choices),
    }
    with serve.serve(spec, paths.cache_dir(ROOT), reuse=False, log_dir=tmp_path) as server:
        reply = httpx.post(f"{server.base_url}/chat/completions", json=body, timeout=300)
        reply.raise_for_status()
    assert reply.json()["choices"][0]["message"]["content"].strip() in choices
