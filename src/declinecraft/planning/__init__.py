"""Planning a run before anything is sent (``make plan``): calls, tokens, hours, dollars, needs.

:func:`declinecraft.planning.plan.build` counts what each stage will ask each model
(:mod:`.counts`), prices and times it (:mod:`.costs`) and lists what the machine lacks
(:mod:`.needs`). It sits beside ``analysis`` in the layers: it reads the stages' own grids
(``evaluation.answer.plan``, the views' run lists) so it counts what they will run.
"""
