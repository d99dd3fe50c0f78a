"""The analysis part (stage 07): every statistic of the paper over a run's judged responses.

``stage.run`` is the entry point; ``analyze`` computes the result tables (with ``paired``,
``models`` and ``judges``), ``paper_tables`` the content of the paper's tables, ``inputs`` and
``results`` read and write the stage's files, ``annotation`` the human-validation sample and
``examples`` the example responses of Table 1.
"""
