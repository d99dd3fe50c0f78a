"""The explorer's static report page ``outputs/<run>/explorer/index.html`` (``make report``).

The report is one self-contained file: inline CSS and JavaScript, no network. Its data is JSON
in a ``<script type="application/json">`` tag (``<``, ``>`` and ``&`` escaped, so no text can end
the tag): per question a search text, the label of every (configuration, setting), the settings
and configurations where each :data:`explore.FLAGS` filter holds, and the question's section as
HTML rendered by :func:`question_html` (the same view as :func:`explore.show`). The page reads
``location.hash`` on load (``#q=copper&transition=A-X&from=single&to=iterative``) and writes it
back as the controls change, so a filtered view is a link.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

import polars as pl

from declinecraft.explore import frame as explore
from declinecraft.core import paths
from declinecraft.core.config import RunConfig
from declinecraft.explore.frame import setting_order
from declinecraft.explore.views import CSS, TRACE_CHARS, question_html


def report_data(frame: pl.DataFrame, chunks: pl.DataFrame | None, *, run: str = "") -> dict[str, Any]:
    """The JSON the report embeds: run facts, settings, configurations, flags and one entry per question."""
    code = pl.col("label").replace_strict(explore.CODE_OF, default="-", return_dtype=pl.String)
    labels: dict[str, dict[str, dict[str, str]]] = {}
    for qid, config, setting, c in frame.select(
        "question_id", pl.format("{}|{}", "model", "thinking"), "setting", code
    ).iter_rows():  # fmt: skip
        labels.setdefault(qid, {}).setdefault(config, {})[setting] = c
    flags: dict[str, dict[str, list[list[str | None]]]] = {}
    for name, (_, fn) in explore.FLAGS.items():
        rows = fn(frame)
        per_row = "model" in rows.columns
        for r in rows.iter_rows(named=True):
            entry = [r["setting"], f"{r['model']}|{r['thinking']}" if per_row else None]
            flags.setdefault(r["question_id"], {}).setdefault(name, []).append(entry)
    hay = pl.concat_str([pl.col(c).fill_null("") for c in explore.SEARCH_FIELDS], separator="\n")
    text = dict(frame.group_by("question_id").agg(hay.str.join("\n").str.to_lowercase().alias("t")).iter_rows())
    lists = [frame.select(pl.col(c).explode().alias("id")) for c in ("retrieved_chunk_ids", "scenario_chunk_ids")]
    used = pl.concat([*lists, frame.select(pl.col("target_chunk_id").alias("id"))])["id"].drop_nulls().unique()
    meta = pl.DataFrame(schema={"chunk_id": pl.String, "title": pl.String, "url": pl.String, "corpus": pl.String})
    texts: dict[str, str] = {}
    if chunks is not None:
        chunks = chunks.filter(pl.col("chunk_id").is_in(used.implode()))
        meta, texts = chunks.select(meta.columns), dict(chunks.select("chunk_id", "text").iter_rows())
    questions = []
    for qid in frame["question_id"].unique(maintain_order=True).to_list():
        view = explore.show(qid, frame, chunks=meta)
        questions.append({"id": qid, "answerable": bool(view.question.get("answerable")), "text": text[qid],
                          "labels": labels.get(qid, {}), "flags": flags.get(qid, {}),
                          "html": question_html(view, trace_chars=TRACE_CHARS)})  # fmt: skip
    return {
        "run": run, "n_responses": frame.height,
        "settings": setting_order(frame["setting"].unique().to_list()),
        "models": sorted(frame["model"].unique().to_list()),
        "judges": [c.removeprefix("score_") for c in explore.score_columns(frame)],
        "flags": {name: title for name, (title, _) in explore.FLAGS.items()},
        "questions": questions, "chunks": texts,
    }  # fmt: skip


def embed_json(data: Any) -> str:
    """JSON safe inside a ``<script>`` element: ``<``, ``>`` and ``&`` as ``\\u`` escapes."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def report_html(frame: pl.DataFrame, chunks: pl.DataFrame | None, *, run: str = "") -> str:
    """The whole self-contained page."""
    data = report_data(frame, chunks, run=run)
    title = f"DeclineCraft explorer · {run}" if run else "DeclineCraft explorer"
    return PAGE.replace("{{TITLE}}", html.escape(title)).replace(
        "{{CSS}}", CSS).replace("{{JS}}", JS).replace("{{DATA}}", embed_json(data))  # fmt: skip


def write_report(cfg: RunConfig, *, out: Path | None = None) -> Path:
    """Write ``outputs/<run>/explorer/index.html`` (or ``out``) for a run and return its path."""
    frame = explore.load(cfg)
    try:
        chunks = explore.load_chunks(cfg)
    except FileNotFoundError:
        chunks = None
    target = out or cfg.run_dir() / "explorer" / "index.html"
    return paths.write_text_atomic(target, report_html(frame, chunks, run=cfg.run))


PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>{{TITLE}}</title><style>{{CSS}}
body{margin:0;background:#f4f6f9;font:14px system-ui,-apple-system,"Segoe UI",sans-serif;color:#1d232b}
header{position:sticky;top:0;background:#fff;border-bottom:1px solid #d5dbe3;padding:8px 16px;z-index:2}
header h1{font-size:17px;margin:0 0 6px}header label{margin-right:10px;white-space:nowrap}
header input[type=search]{width:220px}main{max-width:1180px;margin:0 auto;padding:0 16px 40px}
#dc-count{font-weight:600;margin-left:8px}#dc-summary{color:#5b6675;font-size:12px}
</style></head><body>
<header><h1>{{TITLE}}</h1><div id="dc-summary"></div><div>
<label>Search <input type="search" id="dc-q" placeholder="words in question, page, responses"></label>
<label>Questions <select id="dc-answerable"><option value="">all</option><option value="true">answerable</option>
<option value="false">unanswerable</option></select></label>
<label>Model <select id="dc-model"></select></label><label>Thinking <select id="dc-thinking">
<option value="">any</option><option value="off">off</option><option value="on">on</option></select></label>
<label>Setting <select id="dc-setting"></select></label><label>Filter <select id="dc-flag"></select></label></div><div>
<label>Transition <select id="dc-cmp"><option value="condition">between settings</option>
<option value="thinking">thinking off → on</option></select></label>
<label class="dc-cond">from <select id="dc-from"></select></label>
<label class="dc-cond">to <select id="dc-to"></select></label>
<label class="dc-think">in <select id="dc-in"></select></label>
<label>label <select id="dc-la"></select></label><label>→ <select id="dc-lb"></select></label>
<span id="dc-count"></span></div></header>
<main><div id="dc-out"></div><p><button id="dc-more" type="button">show more</button></p></main>
<script type="application/json" id="dc-data">{{DATA}}</script>
<script>{{JS}}</script></body></html>
"""

JS = r"""
(function(){
"use strict";
const D=JSON.parse(document.getElementById("dc-data").textContent);
const $=id=>document.getElementById("dc-"+id), PAGE=50;
const CODES=[["*","any"],["A","ABSTAIN"],["D","DENY"],["X","ANSWER"],["-","no label"]];
let shown=PAGE;
function fill(id,opts){$(id).innerHTML=opts.map(([v,t])=>`<option value="${v}">${t}</option>`).join("");}
const esc=s=>String(s).replace(/[&<>"]/g,c=>({"&":"&amp;","<":"&lt;",">":"&gt;",'"':"&quot;"}[c]));
fill("model",[["","all"]].concat(D.models.map(m=>[esc(m),esc(m)])));
fill("setting",[["","all"]].concat(D.settings.map(s=>[esc(s),esc(s)])));
fill("flag",[["","none"]].concat(Object.entries(D.flags).map(([k,t])=>[k,esc(t)])));
for(const id of ["from","to","in"])fill(id,D.settings.map(s=>[esc(s),esc(s)]));
fill("la",CODES);fill("lb",CODES);
const pick=(id,v)=>{if(D.settings.includes(v))$(id).value=v;};
pick("from","single");pick("to","iterative");pick("in","no_rag");
const KEYS=["q","answerable","model","thinking","setting","flag","cmp","from","to","in"];
const DEF={};for(const k of KEYS)DEF[k]=$(k).value;
const nA=D.questions.filter(q=>q.answerable).length;
$("summary").textContent=`run ${D.run} · ${D.questions.length} questions (${nA} answerable) · `+
 `${D.n_responses} responses · `+
 `${D.models.length} models · settings: ${D.settings.join(", ")} · accuracy judges: ${D.judges.join(", ")||"none"}`;
function readHash(){const p=new URLSearchParams(location.hash.slice(1));
 for(const k of KEYS){const v=p.get(k);
  $(k).value=v!==null&&(k==="q"||[...$(k).options].some(o=>o.value===v))?v:DEF[k];}
 const t=(p.get("transition")||"*-*").split("-");
 $("la").value=CODES.some(c=>c[0]===t[0])?t[0]:"*";$("lb").value=CODES.some(c=>c[0]===t[1])?t[1]:"*";}
function state(){const s={};for(const k of KEYS)s[k]=$(k).value;s.la=$("la").value;s.lb=$("lb").value;return s;}
function writeHash(s){const p=new URLSearchParams();
 for(const k of KEYS)if(s[k]!==DEF[k])p.set(k,s[k]);if(s.la!=="*"||s.lb!=="*")p.set("transition",s.la+"-"+s.lb);
 const h=p.toString();if(h!==location.hash.slice(1))history.replaceState(null,"",h?"#"+h:location.pathname);}
const split=c=>{const i=c.lastIndexOf("|");return [c.slice(0,i),c.slice(i+1)];};
function cfgOk(c,s){if(!c)return true;const [m,t]=split(c);
 return(!s.model||s.model===m)&&(!s.thinking||s.thinking===t);}
const ok=(code,want)=>want==="*"||code===want;
function transition(q,s){if(s.la==="*"&&s.lb==="*")return null;const hits=[];
 for(const c in q.labels){if(!cfgOk(c,s))continue;
  if(s.cmp==="thinking"){const [m,t]=split(c);const on=q.labels[m+"|on"];
   if(t!=="off"||!on||!(s.in in q.labels[c])||!(s.in in on)||(s.thinking&&s.thinking!=="off"))continue;
   if(ok(q.labels[c][s.in],s.la)&&ok(on[s.in],s.lb))hits.push([c,s.in],[m+"|on",s.in]);}
  else{const l=q.labels[c];if(!(s.from in l)||!(s.to in l))continue;
   if(ok(l[s.from],s.la)&&ok(l[s.to],s.lb))hits.push([c,s.from],[c,s.to]);}}
 return hits;}
function matches(q,s){
 if(s.answerable&&String(q.answerable)!==s.answerable)return false;
 if(s.q&&!q.text.includes(s.q.toLowerCase()))return false;
 if((s.model||s.thinking)&&!Object.keys(q.labels).some(c=>cfgOk(c,s)))return false;
 if(s.flag&&!(q.flags[s.flag]||[]).some(([st,c])=>(!s.setting||st===s.setting)&&cfgOk(c,s)))return false;
 const t=transition(q,s);if(t!==null&&!t.length)return false;q._hits=t||[];return true;}
function render(){const t0=performance.now(),s=state();writeHash(s);
 document.querySelectorAll(".dc-cond").forEach(e=>e.classList.toggle("dc-hidden",s.cmp!=="condition"));
 document.querySelectorAll(".dc-think").forEach(e=>e.classList.toggle("dc-hidden",s.cmp!=="thinking"));
 const list=D.questions.filter(q=>matches(q,s));const out=$("out");
 out.innerHTML=list.slice(0,shown).map(q=>q.html).join("")||"<p>No question matches.</p>";
 for(const q of list.slice(0,shown)){const sec=document.getElementById("q-"+q.id);if(!sec)continue;
  sec.querySelectorAll(".dc-set").forEach(e=>
   e.classList.toggle("dc-hidden",!!s.setting&&e.dataset.setting!==s.setting));
  sec.querySelectorAll(".dc-row").forEach(e=>{e.classList.toggle("dc-hidden",!cfgOk(e.dataset.config,s));
   e.classList.toggle("dc-hit",q._hits.some(([c,st])=>c===e.dataset.config&&st===e.dataset.setting));});}
 $("count").textContent=`${list.length} of ${D.questions.length} questions`+
  (list.length>shown?` (first ${shown} shown)`:"");
 $("more").classList.toggle("dc-hidden",list.length<=shown);
 document.body.dataset.renderMs=(performance.now()-t0).toFixed(1);document.body.dataset.matches=list.length;}
readHash();render();document.body.dataset.readyMs=performance.now().toFixed(0);
for(const k of [...KEYS,"la","lb"])$(k).addEventListener(k==="q"?"input":"change",()=>{shown=PAGE;render();});
document.addEventListener("toggle",e=>{const d=e.target;if(!d.dataset||!d.dataset.chunk||!d.open)return;
 const pre=d.querySelector("pre");
 if(!pre.textContent)pre.textContent=D.chunks[d.dataset.chunk]||"(chunk text not in this report)";},true);
$("more").addEventListener("click",()=>{shown+=PAGE;render();});
window.addEventListener("hashchange",()=>{readHash();shown=PAGE;render();});
})();
"""
