"""The hand-written sentence tables of the L5 readers (negation by scope), with their labels.

Each row is an L5 response about one value, 20 seconds in the target chunk and 35 seconds in its
conflicting copy. ``CONFLICT_TABLE`` and ``VALUE_TABLE`` were written before the readers were
rewritten (their last rows while they were built) and guided them; the ``HELD_OUT`` tables were
written afterwards and never tuned on, so their misses (``KNOWN_MISSES``) are the honest part of
the error rate in docs/views.md.
"""

from __future__ import annotations

#: (response, conflict-aware?) - ESB's Conflict-Aware Answering: the response says the passages disagree.
CONFLICT_TABLE: tuple[tuple[str, bool], ...] = (
    # conflict stated
    ("The passages conflict: one says 20 seconds, the other says 35 seconds. I go with 20 seconds.", True),
    ("Passage [2] contradicts passage [1]; the answer is 20 seconds.", True),
    ("There is a discrepancy between the sources. It drops 3 ingots.", True),
    ("The passages do not agree on the value, but passage [1] says 20 seconds.", True),
    ("The values are not consistent. Answer: 20 seconds.", True),
    ("There is no conflict in passage [1], but another passage says 35 seconds.", True),
    ("It is 20 seconds, although the passages disagree.", True),
    ("Not surprisingly, the passages contradict each other; I would say 20 seconds.", True),
    ("The two passages give different values: 20 seconds and 35 seconds. I go with 20 seconds.", True),
    ("The two passages are inconsistent about the interval.", True),
    ("The sources differ on this point; the first says 20 seconds.", True),
    ("These passages cannot both be right: one says 20 seconds and the other 35 seconds.", True),
    ("I noticed a contradiction between the passages, so I rely on the first: 20 seconds.", True),
    ("Answer: 20 seconds. Note: the second passage conflicts with the first.", True),
    ("The passages don't match: 20 seconds versus 35 seconds.", True),
    ("Unfortunately the passages are contradictory. The golem presses a button every 20 seconds.", True),
    # hedged conflict: a conflict raised as possible still shows the model noticed it
    ("The passages may conflict; I go with 20 seconds.", True),
    ("There seems to be a discrepancy between the two passages. It is probably 20 seconds.", True),
    ("The passages appear to contradict each other, so the answer is uncertain, but likely 20 seconds.", True),
    ("It is possible that the sources disagree here; passage [1] says 20 seconds.", True),
    ("I am not sure whether the passages conflict, but passage [1] says 20 seconds.", True),
    # agreement
    ("The two passages agree: 20 seconds.", False),
    ("The passages agree: 20 seconds.", False),
    ("Both passages say the same thing: 20 seconds.", False),
    ("The two passages are consistent with each other. Answer: 20 seconds.", False),
    ("According to the two passages, the golem presses a button every 20 seconds.", False),
    ("Passage [1] and passage [2] both state 20 seconds.", False),
    ("The golem presses a button every 20 seconds.", False),
    ("", False),
    # negated conflict
    ("There is no conflict between the passages. The golem presses a button every 20 seconds.", False),
    ("The passages do not contradict each other; the answer is 20 seconds.", False),
    ("No two passages differ on this: 20 seconds.", False),
    ("The sources don't seem to be in any conflict. It drops 3 copper ingots.", False),
    ("Sufficiency: sufficient, without contradiction. Answer: Coal.", False),
    ("The passages cannot be in conflict, since they describe the same golem; 20 seconds.", False),
    ("I see no discrepancy between the sources: 20 seconds.", False),
    ("Neither passage contradicts the other. 20 seconds.", False),
    ("There is nothing inconsistent here: the golem presses a button every 20 seconds.", False),
    ("The passages never disagree about the interval: 20 seconds.", False),
    ("The passages are not inconsistent; they both give 20 seconds.", False),
    ("A conflict between the passages does not exist here; the answer is 20 seconds.", False),
    ("There is probably no conflict between the passages: 20 seconds.", False),
    ("The two passages do not differ. 20 seconds.", False),
    ("Without any contradiction between the sources, the answer is 20 seconds.", False),
    ("No conflict. 20 seconds.", False),
    ("There is no conflict, contradiction or discrepancy between the passages: 20 seconds.", False),
)

#: (response, states the original "20 seconds"?, states the altered "35 seconds"?)
VALUE_TABLE: tuple[tuple[str, bool, bool], ...] = (
    ("It does not take 20 seconds; it takes 35 seconds.", False, True),
    ("Every 35 seconds, not 20 seconds.", False, True),
    ("The golem presses a button every 20 seconds.", True, False),
    ("Every 20 seconds rather than 35 seconds.", True, False),
    ("It is 35 seconds instead of 20 seconds.", False, True),
    ("Neither 20 seconds nor 35 seconds is right.", False, False),
    ("Not 20 seconds but 35 seconds.", False, True),
    ("It is either 20 seconds or 35 seconds.", True, True),
    ("It never waits 35 seconds; it waits 20 seconds.", True, False),
    ("The interval is 20 seconds, and it is not 35 seconds.", True, False),
    ("Not surprisingly, it is 35 seconds.", False, True),
    ("It is 20 seconds, not 35 seconds as the other passage claims.", True, False),
    ("The answer is not 20 seconds.", False, False),
    ("I don't think it is 35 seconds; it is 20 seconds.", True, False),
    ("It can't be 20 seconds, so it must be 35 seconds.", False, True),
    ("Both 20 seconds and 35 seconds appear in the passages.", True, True),
    ("It is not 20 seconds, 25 seconds or 30 seconds; it is 35 seconds.", False, True),
)

#: Written after the readers, never tuned on.
HELD_OUT_CONFLICT: tuple[tuple[str, bool], ...] = (
    ("Passage 1 says 20 seconds while passage 2 says 35 seconds, so they contradict each other.", True),
    ("The evidence is conflicting, so I cannot be certain; I would guess 20 seconds.", True),
    ("These two passages are in disagreement about the timing.", True),
    ("There's a contradiction here. The first passage is more reliable: 20 seconds.", True),
    ("The passages are at odds with one another. I'll answer 20 seconds.", True),
    ("The passages report inconsistent intervals (20 vs 35 seconds).", True),
    ("The information is not the same in both passages.", True),
    ("It looks like the passages might not agree; I choose 20 seconds.", True),
    ("Both passages are in agreement: the golem presses a button every 20 seconds.", False),
    ("There are no contradictions in the provided passages. 20 seconds.", False),
    ("I found no conflicting information. It is 20 seconds.", False),
    ("The passages don't contradict one another, so the answer is 20 seconds.", False),
    ("Nothing in the passages conflicts: 20 seconds.", False),
    ("The two sources match exactly, giving 20 seconds.", False),
    ("Based on both passages, which are consistent, the answer is 20 seconds.", False),
    ("There isn't any discrepancy. Answer: 20 seconds.", False),
)
HELD_OUT_VALUE: tuple[tuple[str, bool, bool], ...] = (
    ("The correct value is 20 seconds, not 35 seconds.", True, False),
    ("It isn't 35 seconds. It's 20 seconds.", True, False),
    ("It presses the button every 35 seconds (not 20 seconds).", False, True),
    ("The 35 seconds in the second passage is wrong; the golem waits 20 seconds.", True, False),
    ("I would say 35 seconds.", False, True),
    ("The golem does not wait 20 seconds or 35 seconds.", False, False),
    ("Instead of 35 seconds, it is 20 seconds.", True, False),
    ("The answer should be 20 seconds; 35 seconds seems incorrect.", True, False),
)
#: Sentences the readers get wrong (the tests expect them to fail, strictly): "not the same" is no
#: agreement phrase of the reader; a rejection four words after its value is beyond its reach.
KNOWN_MISSES = frozenset(
    {
        "The information is not the same in both passages.",
        "The 35 seconds in the second passage is wrong; the golem waits 20 seconds.",
    }
)
