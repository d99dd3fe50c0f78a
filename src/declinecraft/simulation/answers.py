"""What a simulated model replies: every role's format, with labels drawn at the paper's rates.

A reply depends only on the model, its thinking setting and the request text (a seeded hash), so
reruns, resumed runs and any call order get byte-identical replies. The role comes from a phrase
of the rendered prompt (``params/prompts/``). Whether a question is answerable is read from the
thing it names (:func:`corpus.is_post`: things created after the cut-off cannot be known).

Responses to questions are drawn per model, thinking setting and condition (:class:`Rates`): an
unanswerable question is declined at the model's correct abstention rate (CAR), met with a
premise denial at the paper's denial share, answered otherwise; an answerable one is attempted at
the model's attempt rate and answered correctly at its accuracy when attempted. The rates are
``params/paper_reported.yaml``'s: Table 2's row for a model that has one (single-shot), moved to
the other conditions and to thinking by the paper's mean differences; a model without a row gets
the condition's mean with a fixed offset drawn from its name (±12 points CAR, ±3 points attempt).
The response text says what it is (a decline, a denial, a correct or a wrong answer) in words the
simulated judges read, each judge disagreeing on a seeded 3 % of responses.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from declinecraft.simulation import corpus

#: Responses that decline, deny, answer right or wrong: the phrases the judges look for.
ABSTAIN = "The provided context does not contain the answer. I would need to know more about the {name}."
ABSTAIN_NO_CONTEXT = "I do not know the answer. I would need to know more about the {name}."
DENY = "There is no {name} in Minecraft: it does not exist in the game."
CORRECT = "As the wiki states, the {name} works exactly as described in its article, step by step."
PARTIAL = "Roughly, the {name} works as described in its article, though some details may differ."
WRONG = "I believe the {name} behaves like any other block of its kind."
DISAGREE = 0.03


def draw(*parts: object) -> float:
    """A uniform number in [0, 1) fixed by ``parts``."""
    digest = hashlib.sha256("\x1f".join(map(str, parts)).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


@dataclass(frozen=True)
class Rates:
    """One configuration's rates in one condition, as proportions."""

    car: float
    attempt: float
    denial: float
    accuracy: float


@lru_cache(maxsize=4)
def _reported(path: str) -> dict[str, float]:
    raw = yaml.safe_load(Path(path).read_text(encoding="utf-8"))["reported"]
    return {k: v["value"] for k, v in raw.items() if isinstance(v.get("value"), int | float)}


def rates(model: str, thinking: bool, condition: str, reported: str | Path) -> Rates:
    """The rates of ``model`` (thinking on or off) in ``condition`` (no_rag, single, iterative)."""
    r = _reported(str(reported))
    key = "t2_" + re.sub(r"[^a-z0-9]+", "_", model.lower()) + ("_thinking" if thinking else "")
    shift = {"no_rag": "no_rag", "single": "single_shot", "iterative": "iterative"}[condition]
    car_mean, attempt_mean = r[f"car_mean_{shift}"], r[f"attempt_mean_{shift}"]
    if f"{key}_car" in r:  # Table 2 (single-shot), moved by the condition's mean difference
        car = r[f"{key}_car"] + car_mean - r["car_mean_single_shot"]
        attempt = r[f"{key}_attempt"] + attempt_mean - r["attempt_mean_single_shot"]
        accuracy = r.get(f"{key}_accuracy_when_attempted", 70.0)
    else:
        car = car_mean + 24 * (draw("car", model) - 0.5)
        attempt = attempt_mean + 6 * (draw("attempt", model) - 0.5)
        accuracy = 55 + 25 * draw("accuracy", model)
        if thinking:
            change = "thinking_no_rag_car_mean_change" if condition == "no_rag" else "thinking_single_car_mean_change"
            car += r[change]
    denial = r.get(f"premise_denial_share_{shift}", 15.0)
    car, attempt = min(max(car, 1.0), 99.0), min(max(attempt, 50.0), 99.9)
    return Rates(car / 100, attempt / 100, min(denial, 100 - car) / 100, accuracy / 100)


def thinking_on(body: dict[str, Any]) -> bool:
    """Whether a request body switches thinking on (vLLM's chat template or OpenRouter's field)."""
    kwargs = body.get("chat_template_kwargs") or {}
    reasoning = body.get("reasoning") or {}
    return bool(kwargs.get("enable_thinking") or reasoning.get("enabled") or body.get("reasoning_effort"))


def section(text: str, start: str, end: str | None = None) -> str:
    """The part of ``text`` after ``start`` and before ``end`` (to its end when ``end`` is None)."""
    _, _, rest = text.partition(start)
    return rest.partition(end)[0] if end else rest


def sentences(text: str) -> list[str]:
    """The prompt's wiki sentences of 40-220 characters, without page headers and table rows."""
    body = re.sub(r"\[Page: [^\]]*\]", " ", text)
    return [s.strip() for s in re.split(r"(?<=[.!])\s+", body) if 40 <= len(s.strip()) <= 220 and "|" not in s]


def respond(body: dict[str, Any], reported: str | Path) -> str:
    """The content of one simulated reply to a chat request ``body``."""
    messages = body.get("messages") or [{}]
    text = str(messages[-1].get("content", ""))
    model = str(body.get("model", ""))
    if (made := _construction(text)) is not None:
        return made
    if (judged := _judgement(text, model)) is not None:
        return judged
    question = text.rpartition("Question:")[2].strip() or text[-300:]
    name = corpus.subject(question, last=True)
    if "DECISION:" in text and "CONFIDENCE" in text:  # Know2Guess's four lines
        condition = "single" if "[Page:" in text else "no_rag"
        label, correct = _label(model, thinking_on(body), condition, question, text, reported)
        if label != "ANSWER":
            return "DECISION: ABSTAIN_DONT_KNOW\nCONFIDENCE: 25\nFINAL_ANSWER: NA\nREASON_CODE: unknown"
        confidence = 60 + int(35 * draw("confidence", model, text))
        return (
            f"DECISION: ANSWER\nCONFIDENCE: {confidence}\nFINAL_ANSWER: {CORRECT if correct else WRONG}".format(
                name=name
            )
            + "\nREASON_CODE: known"
        )
    if "If your own knowledge does not contain the answer" in text:
        condition = "no_rag"
    else:
        condition = "iterative" if text.count("[Page:") > 5 else "single"
    label, correct = _label(model, thinking_on(body), condition, question, text, reported)
    if label == "ABSTAIN":
        reply = (ABSTAIN_NO_CONTEXT if condition == "no_rag" else ABSTAIN).format(name=name)
    elif label == "DENY":
        reply = DENY.format(name=name)
    else:
        partial = correct and draw("partial", model, text) < 0.1
        reply = (PARTIAL if partial else CORRECT if correct else WRONG).format(name=name)
    if "Step 2. Write" in text:  # ESB's P3: assess, then answer
        insufficient = label == "ABSTAIN"
        verdict = "The passages do not state it." if insufficient else "The passages state it."
        return f"Sufficiency: {verdict}\nAnswer: " + (
            "The evidence is insufficient to answer this question." if insufficient else reply
        )
    return reply


def _label(
    model: str, thinking: bool, condition: str, question: str, text: str, reported: str | Path
) -> tuple[str, bool]:
    r = rates(model, thinking, condition, reported)
    u = draw("label", model, thinking, text)
    if corpus.is_post(question):
        return ("ABSTAIN" if u < r.car else "DENY" if u < r.car + r.denial else "ANSWER"), False
    if u >= r.attempt:
        return "ABSTAIN", False
    return "ANSWER", draw("correct", model, thinking, text) < r.accuracy


def _construction(text: str) -> str | None:
    """Generation (03), verification (04), the rewriter, the reflection step, the oracle, ESB's conflicts."""
    if "scenario creator" in text:
        names = list(dict.fromkeys(corpus.subject(s) for s in sentences(text)))[:2] or ["strange block"]
        x, y = (names * 2)[:2]
        # Each thing named twice, in words the wiki's sentences never use: the model-free hash
        # embedder weighs every shared word alike, so shared filler would decide the target search.
        return f"Building my base near {x}, I put {y} beside {x}, so {y} must stay."
    if "You compare a NEW Minecraft Wiki passage" in text:
        return json.dumps({"facts": sentences(section(text, "NEW PASSAGE:"))[:3]})
    if "You are writing a test question" in text:
        fact = section(text, "TARGET FACT:", "\n").strip()
        name = corpus.subject(fact)
        # The fact's words without its numbers and names (the answer stays out of the question),
        # so two questions on different facts never read the same.
        words = re.sub(r"\[\[|\]\]|\d+", " ", fact.replace(name, " ")).split()
        ask = "how many" if re.search(r"\d", fact) else "what happens"
        return f"I am playing in survival: {ask} with the {name} here ({' '.join(words[:12]).rstrip('.')})?"
    if "state or directly imply the following FACT" in text:
        return "NO"
    if "You check whether older Minecraft Wiki text already answers" in text:
        return "NO" if corpus.is_post(text.partition("CONTEXT")[0]) else "YES"
    if "evaluating the relevance and sufficiency" in text:
        if draw("reflect", text) < 0.5:
            return json.dumps({"assessment": "Sufficient", "missing_info": "", "follow_up_questions": []})
        query = section(text, "User Query:", "\n").strip().strip('"')
        follow = f"Where is the {corpus.subject(query)} found?"
        return json.dumps({"assessment": "Insufficient", "missing_info": "where", "follow_up_questions": [follow]})
    if "Rewrite the following Minecraft player's question" in text:
        return section(text, "Question:", "\n").strip()[:120] or "minecraft"
    if "writing reference answers" in text:
        return "The reference answer: " + (sentences(section(text, "Context:")) or ["no detail."])[0]
    if '"original"' in text and '"altered"' in text:
        numbers = re.findall(r"\b\d+\b", section(text, "Fact:"))
        if not numbers:
            return json.dumps({"original": "", "altered": ""})
        return json.dumps({"original": numbers[0], "altered": str(int(numbers[0]) + 3)})
    return None


def _judgement(text: str, model: str) -> str | None:
    """The response judges' labels and the accuracy judges' scores, read from the response's words."""
    if "Reply with exactly one word: DENY, ABSTAIN or ANSWER" in text:
        response = section(text.rpartition("QUESTION:")[2], "RESPONSE:", "Reply with exactly").lower()
        if "does not exist" in response:
            label = "DENY"
        elif "do not know" in response or "does not contain" in response or "insufficient" in response:
            label = "ABSTAIN"
        else:
            label = "ANSWER"
        if draw("judge", model, text) < DISAGREE:
            label = {"DENY": "ANSWER", "ABSTAIN": "ANSWER", "ANSWER": "ABSTAIN"}[label]
        return label
    if "Respond with ONLY the numeric score" in text:
        candidate = section(text, "CANDIDATE MODEL", "Evaluation Rules:").lower()
        score = "1.0" if "as the wiki states" in candidate else "0.5" if "roughly" in candidate else "0.0"
        if draw("score", model, text) < DISAGREE:
            score = {"1.0": "0.5", "0.5": "0.0", "0.0": "0.5"}[score]
        return score
    return None
