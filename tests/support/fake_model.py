"""A scripted stand-in for every model role, for the fake OpenAI server (``--respond tests.support.fake_model:reply``).

It reads which of ``params/prompts/`` a request renders (by a phrase of the template) and answers
in the shape the stage parses: a scenario, a JSON list of facts copied from the NEW passage, a
question, YES/NO verdicts, answers that abstain on about a third of the questions, labels and
scores. Replies depend only on the request text, so two runs (in any call order, killed and
resumed or not) get byte-identical answers: what the fault suite needs to compare whole runs.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from declinecraft.simulation.answers import section, sentences


def _pick(text: str, n: int) -> int:
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:8], 16) % n


def reply(request: dict[str, Any]) -> str:
    """The content of the answer to one chat request body."""
    text = str((request.get("messages") or [{}])[-1].get("content", ""))
    if "scenario creator" in text:
        return "I am exploring near my base and found something new in the world."
    if "You compare a NEW Minecraft Wiki passage" in text:
        facts = sentences(section(text, "NEW PASSAGE:"))[:2]
        return json.dumps({"facts": facts})
    if "You are writing a test question" in text:
        fact = section(text, "TARGET FACT:", "\n").strip()
        words = re.findall(r"[A-Za-z][A-Za-z'-]+", fact)[:5]
        return f"What should I know about {' '.join(words) or 'this'} here?"
    if "state or directly imply the following FACT" in text:
        return "NO"
    if "You check whether older Minecraft Wiki text already answers" in text:
        answer = section(text, "EXPECTED ANSWER:", "\n").strip()
        context = section(text, "CONTEXT (older wiki text):")
        return "YES" if answer and answer[:40] in context else "NO"
    if "evaluating the relevance and sufficiency" in text:
        return json.dumps({"assessment": "Sufficient", "missing_info": "", "follow_up_questions": []})
    if "Rewrite the following Minecraft player's question" in text:
        return section(text, "Question:", "\n").strip()[:80] or "minecraft"
    if "Reply with exactly one word: DENY, ABSTAIN or ANSWER" in text:
        answer = section(text.rpartition("QUESTION:")[2], "RESPONSE:", "Reply with exactly").lower()
        return "ABSTAIN" if "do not know" in answer or "does not contain" in answer else "ANSWER"
    if "Respond with ONLY the numeric score" in text:
        return ["1.0", "0.5", "0.0"][_pick(text, 3)]
    if "writing reference answers" in text:
        return "The reference answer: " + (sentences(section(text, "Context:")) or ["no detail."])[0]
    if "DECISION:" in text or "DECISION" in text and "CONFIDENCE" in text:
        if _pick(text, 3) == 0:
            return "DECISION: ABSTAIN_DONT_KNOW\nCONFIDENCE: 30\nFINAL_ANSWER: NA\nREASON_CODE: unknown"
        return "DECISION: ANSWER\nCONFIDENCE: 80\nFINAL_ANSWER: it glows\nREASON_CODE: known"
    if '"original"' in text and '"altered"' in text:
        return json.dumps({"original": "", "altered": ""})
    if "only the best short factual answer" in text:
        return "It glows."
    if _pick(text, 3) == 0:
        return "I do not know the answer. I would need to know more about this feature."
    return "It can be found in the world; see the wiki page for details."
