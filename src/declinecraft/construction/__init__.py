"""Building the benchmark (§3.2–3.3, App. D, F, J.1; stages 03 and 04).

``generate_stage`` (notebook 03) drafts scenario + question candidates with ``generate``;
``verify_stage`` (notebook 04) checks them with ``verify`` (cue filter, verifier prompts, review,
caps), assembles the benchmark and writes its audits and datasheet (``audit``).
"""
