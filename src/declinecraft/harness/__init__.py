"""The benchmark in other evaluation harnesses: an inspect_ai task and an lm-evaluation-harness task.

:mod:`.samples` reads a run's or a release's questions and renders the answer stage's prompts;
:mod:`.scoring` turns responses into the project's labels and rates (CAR, attempt rate, accuracy);
:mod:`.inspect_task` is the inspect_ai ``Task`` (``inspect eval``) and ``lm_eval_tasks/`` the
lm-evaluation-harness task folder (``lm_eval --include_path``). Both harnesses are the optional
``harness`` extra. :mod:`.every_eval` writes a run's results in the Every Eval Ever schema and
checks them with that schema's validator (``every-eval-ever``). Nothing else in the package imports
this part.
"""
