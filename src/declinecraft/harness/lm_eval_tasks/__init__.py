"""lm-evaluation-harness task folder: ``lm_eval --include_path`` this folder (see the README)."""
