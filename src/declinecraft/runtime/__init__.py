"""The machinery that runs the science: processes, locks, the call cache's file, builds, replay.

Nothing here is a step of the paper's method; each module names the job it does:

- processes: ``parent_death`` (a child that dies with its parent), ``group_guard`` (a subreaper
  that ends a server's whole process group), ``process_tree`` (stopping a process and everything
  below it), ``stop_signals`` (SIGTERM/SIGINT/SIGHUP as an exception that cleans up),
  ``process_exit`` (how a child ended, told in words, with the end of its log);
- ``run_lock``: one writer per run (the locks ``make all``, ``make nb`` and ``make evaluate`` hold);
- the call cache's file on disk: ``cache_file`` (damage and permission told apart before SQLite
  opens it), ``cache_recovery`` (records read page by page from a damaged SQLite file, for salvage);
- builds and system packages: ``system_packages`` (apt-get's part of ``make setup``),
  ``llama_build`` (llama.cpp's compile flags and the wheel built with them);
- the replay bundle: ``replay`` (a stage's ledger of cached calls, and answering from a bundle),
  ``bundle`` (writing a run's bundle and replaying a run from it).

Layer: above ``core``, below every science part (``llm``, ``corpus``, ``retrieval`` and up), which
import it; it imports none of them (``tests/project/test_architecture.py`` checks it). From
``core`` it takes the run's vocabulary, and only this: ``paths`` (where a run's outputs and the
caches live), ``config`` and ``catalogue`` (which runs a lock covers, which stage files a bundle
holds, the paper stage's status files the last line of ``make all`` reads),
``environment.sha256_file`` (the bundle's file hashes) and ``cpu`` (the flags the llama.cpp build
compiles for). ``core`` never imports ``runtime``.

This ``__init__`` imports nothing: ``system_packages`` and ``llama_build`` run with the standard
library alone, before the package's dependencies are installed.
"""
