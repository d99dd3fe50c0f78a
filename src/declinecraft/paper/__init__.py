"""The paper part (stage 10): figures, LaTeX tables, number macros and the PDF of a run.

``stage.run`` is the entry point. ``figures`` draws every figure (``figures_main``,
``figures_configs``, ``figures_extra`` on the shared ``drawing``, ``panels`` and ``figure_spec``);
``tables`` renders the tables, ``numbers`` and ``run_settings`` the macros, all escaped by
``latex``; ``outputs`` says where they go and ``pdf`` builds the PDF.
"""
