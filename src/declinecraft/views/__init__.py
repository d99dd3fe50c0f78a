"""Other benchmarks' analyses run on DeclineCraft's questions (Know2Guess, evidence levels)."""
