"""The Croissant JSON-LD of a released dataset folder: core metadata plus the Responsible-AI fields.

Croissant 1.0 (http://mlcommons.org/croissant/1.0) with the RAI vocabulary
(http://mlcommons.org/croissant/RAI/1.0). Each Parquet file is a ``cr:FileObject`` addressed
relative to the JSON file, with its sha256; each config is a ``cr:RecordSet`` whose fields read
one column each. ``mlcroissant`` validates and loads it (tests/construction/test_dataset.py).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import date
from pathlib import Path
from typing import Any

import polars as pl
from polars.datatypes import DataTypeClass

from declinecraft.core import paths
from declinecraft.core.config import RunConfig
from declinecraft.core.environment import sha256_file

FILE_NAME = "croissant.json"
CONFORMS_TO = ["http://mlcommons.org/croissant/1.0", "http://mlcommons.org/croissant/RAI/1.0"]
LICENCE_URLS = {
    "apache-2.0": "https://www.apache.org/licenses/LICENSE-2.0",
    "cc-by-nc-sa-3.0": "https://creativecommons.org/licenses/by-nc-sa/3.0/",
}
#: The JSON-LD context of Croissant 1.0 documents (the specification's, with the RAI prefix).
CONTEXT = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "sc": "https://schema.org/",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "dct": "http://purl.org/dc/terms/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "data": {"@id": "cr:data", "@type": "@json"},
    "equivalentProperty": "cr:equivalentProperty",
    "fileProperty": "cr:fileProperty",
    "samplingRate": "cr:samplingRate",
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}


def data_type(dtype: pl.DataType | DataTypeClass) -> tuple[str, bool]:
    """The Croissant ``dataType`` of a Polars column type, and whether it is a list (``repeated``).

    Raises:
        ValueError: a column type the release never writes.
    """
    if isinstance(dtype, pl.List):
        return data_type(dtype.inner)[0], True
    if dtype == pl.String:
        return "sc:Text", False
    if dtype == pl.Boolean:
        return "sc:Boolean", False
    if dtype.is_integer():
        return "sc:Integer", False
    if dtype.is_float():
        return "sc:Float", False
    if isinstance(dtype, (pl.Datetime, pl.Date)):
        return "sc:Date", False
    raise ValueError(f"no Croissant data type for a {dtype} column")


def _record_set(name: str, file_id: str, fields: Mapping[str, str], schema: pl.Schema) -> dict[str, Any]:
    out = []
    for column, meaning in fields.items():
        kind, repeated = data_type(schema[column])
        field: dict[str, Any] = {
            "@type": "cr:Field",
            "@id": f"{name}/{column}",
            "name": column,
            "description": meaning,
            "dataType": kind,
            "source": {"fileObject": {"@id": file_id}, "extract": {"column": column}},
        }
        if repeated:
            field["repeated"] = True
        out.append(field)
    return {
        "@type": "cr:RecordSet",
        "@id": name,
        "name": name,
        "field": out,
        "key": {"@id": f"{name}/{next(iter(fields))}"},
    }


def _rai(cfg: RunConfig) -> dict[str, Any]:
    """The Responsible-AI fields: how the data were collected, made, checked, and their limits."""
    return {
        "rai:dataCollection": (
            f"Wiki pages read from {cfg.corpus.dump if cfg.corpus.source == 'dump' else cfg.corpus.api_url}, split at "
            f"the cut-off {cfg.corpus.cutoff} into C_pre (pages as they stood then) and C_post (pages created after "
            "it), cleaned and cut into chunks. Questions were drafted by a language model from chunks and verified "
            "by another call."
        ),
        "rai:dataCollectionType": ["Web Scraping", "Machine-generated"],
        "rai:dataCollectionRawData": (
            "MediaWiki page revisions (wikitext) of the Minecraft Wiki or the project's mini wiki."
        ),
        "rai:dataCollectionTimeframe": [cfg.corpus.cutoff, cfg.corpus.snapshot or cfg.corpus.cutoff],
        "rai:dataPreprocessingProtocol": (
            "Wikitext is converted to plain text (templates, tables and markup removed), pages outside the rules "
            f"(versions, events, stubs) dropped, and texts chunked ({cfg.corpus.chunk_size} characters, overlap "
            f"{cfg.corpus.chunk_overlap})."
        ),
        "rai:dataAnnotationProtocol": (
            f"Generator {cfg.generate.generator} writes scenario, facts and question from a target chunk "
            f"(temperature 0, seed {cfg.seed}); verifier {cfg.verify.verifier} checks that the scenario does not "
            "state the fact and that retrieved C_pre chunks answer (answerable) or do not answer (unanswerable) the "
            "question."
        ),
        "rai:dataAnnotationPlatform": "The DeclineCraft pipeline (make all), local or hosted OpenAI-compatible models.",
        "rai:machineAnnotationTools": sorted({cfg.generate.generator, cfg.verify.verifier}),
        "rai:dataUseCases": (
            "Evaluating whether retrieval-augmented models abstain on questions their corpus cannot answer."
        ),
        "rai:dataBiases": (
            "Questions cover one game's wiki in English; question style follows the generator model; unanswerable "
            "questions concern content added after the cut-off, so they cluster on recent features."
        ),
        "rai:dataLimitations": (
            "Machine-written questions and references may be wrong or ambiguous; the verifier is a model, not "
            "a person; small runs hold few questions, so their rates carry wide intervals."
        ),
        "rai:dataSocialImpact": "Low: game knowledge only. Meant to measure and reduce confident wrong answers.",
        "rai:personalSensitiveInformation": "None: wiki articles about a video game; no personal data.",
        "rai:dataReleaseMaintenancePlan": "Rebuilt from the repository with make release; versions follow the code.",
    }


def describe(
    cfg: RunConfig,
    folder: Path,
    files: Mapping[str, Path],
    fields: Mapping[str, Mapping[str, str]],
    schemas: Mapping[str, pl.Schema],
    *,
    licence: str,
    published: date,
    counts: Mapping[str, int],
) -> dict[str, Any]:
    """The Croissant document of a release folder: one FileObject and one RecordSet per config."""
    distribution = [
        {
            "@type": "cr:FileObject",
            "@id": f"{name}-parquet",
            "name": f"{name}-parquet",
            "contentUrl": path.relative_to(folder).as_posix(),
            "encodingFormat": "application/x-parquet",
            "sha256": sha256_file(path),
        }
        for name, path in files.items()
    ]
    return {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": CONFORMS_TO,
        "name": f"declinecraft-{cfg.run}",
        "description": (
            f"DeclineCraft ({cfg.run} run): {counts['questions']} scenario questions about a Minecraft wiki, "
            f"{counts['answerable']} answerable from the C_pre corpus of {counts['chunks']} chunks (cut-off "
            f"{cfg.corpus.cutoff}) and the rest unanswerable from it, for measuring abstention in "
            "retrieval-augmented models."
        ),
        "license": LICENCE_URLS.get(licence, licence),
        "version": "1.0.0",
        "datePublished": published.isoformat(),
        "creator": {"@type": "sc:Organization", "name": "DeclineCraft"},
        "keywords": ["retrieval-augmented generation", "abstention", "question answering", "Minecraft"],
        "citeAs": "@misc{declinecraft, title={DeclineCraft: a RAG abstention benchmark built from the Minecraft Wiki}}",
        "isLiveDataset": False,
        **_rai(cfg),
        "distribution": distribution,
        "recordSet": [_record_set(name, f"{name}-parquet", fields[name], schemas[name]) for name in files],
    }


def write(document: Mapping[str, Any], target: Path) -> Path:
    """Write the document as indented JSON (atomically)."""
    return paths.write_text_atomic(target, json.dumps(document, indent=2, ensure_ascii=False) + "\n")
