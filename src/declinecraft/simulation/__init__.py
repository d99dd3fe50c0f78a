"""The simulated cluster (``make simulate``): the paper's whole design run by the real pipeline
against one fake OpenAI-compatible endpoint per model, on a generated wiki of the paper's size.

Nothing a simulated run produces is a result: its params set ``simulated: true``, which stamps
every figure, table, PDF page and explorer page SIMULATED, and its outputs stay under
``outputs/simulate*/``.
"""
