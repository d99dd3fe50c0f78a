"""The bottom layer, imported by every part: where things live (``paths``), the typed params
(``config``, ``params``), the model registry (``registry``), prompt templates (``prompts``), model
files shipped in wheels (``model_files``), the stage files stages hand each other (``artifacts``),
statistics (``stats``, ``agreement``) and the package's own import graph (``deps``).
"""
