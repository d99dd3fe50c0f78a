"""The bottom layer, imported by every part: where things live (``paths``), the typed params
(``config``, ``params``), the model registry (``registry``), prompt templates (``prompts``), model
files shipped in wheels (``model_files``), every stage's files and reads (``catalogue``), how a stage
writes them (``stage_writer``), the readers of the files stages hand each other (``artifacts``),
statistics (``stats``, ``agreement``), the machine record (``environment``, its CPU in ``cpu``) and
the package's own import graph (``deps``). The machinery that runs on top of it is ``runtime``.
"""
