(function(){
"use strict";
/* The first page lists questions from D (report.py's report_data); a question's responses come from
   its file, D.shards + "/" + q.file, a script calling dcShard(id, {html, chunks}) when opened. */
const D=JSON.parse(document.getElementById("dc-data").textContent);
const $=id=>document.getElementById("dc-"+id), PAGE=50, NS=D.settings.length;
const CODES=[["*","any"],["A","ABSTAIN"],["D","DENY"],["X","ANSWER"],["-","no label"]];
const NAMES={A:"ABSTAIN",D:"DENY",X:"ANSWER","-":"none"};
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
 `${D.n_responses} responses · ${D.configs.length} configurations of ${D.models.length} models · `+
 `settings: ${D.settings.join(", ")} · accuracy judges: ${D.judges.join(", ")||"none"}`;
const split=c=>{const i=c.lastIndexOf("|");return [c.slice(0,i),c.slice(i+1)];};
const CFG=D.configs.map(split), SET={}, ON={};
D.settings.forEach((s,i)=>{SET[s]=i;});
D.configs.forEach((c,i)=>{const [m,t]=CFG[i];if(t==="off")ON[i]=D.configs.indexOf(m+"|on");});
const BYID=new Map(D.questions.map(q=>[q.id,q]));
const opened=new Set(), loaded=new Map(), asked=new Map();
function readHash(){const p=new URLSearchParams(location.hash.slice(1));
 for(const k of KEYS){const v=p.get(k);
  $(k).value=v!==null&&(k==="q"||[...$(k).options].some(o=>o.value===v))?v:DEF[k];}
 const t=(p.get("transition")||"*-*").split("-");
 $("la").value=CODES.some(c=>c[0]===t[0])?t[0]:"*";$("lb").value=CODES.some(c=>c[0]===t[1])?t[1]:"*";
 opened.clear();for(const id of p.getAll("open"))if(BYID.has(id))opened.add(id);}
function state(){const s={};for(const k of KEYS)s[k]=$(k).value;s.la=$("la").value;s.lb=$("lb").value;return s;}
function writeHash(s){const p=new URLSearchParams();
 for(const k of KEYS)if(s[k]!==DEF[k])p.set(k,s[k]);if(s.la!=="*"||s.lb!=="*")p.set("transition",s.la+"-"+s.lb);
 for(const id of opened)p.append("open",id);
 const h=p.toString();if(h!==location.hash.slice(1))history.replaceState(null,"",h?"#"+h:location.pathname);}
function cfgOk(c,s){if(c<0)return true;const [m,t]=CFG[c];
 return(!s.model||s.model===m)&&(!s.thinking||s.thinking===t);}
const code=(q,c,st)=>q.labels[c*NS+st];
const has=(q,c,st)=>st!==undefined&&code(q,c,st)!==".";
const ok=(v,want)=>want==="*"||v===want;
function transition(q,s){if(s.la==="*"&&s.lb==="*")return null;const hits=[];
 for(let c=0;c<CFG.length;c++){if(!cfgOk(c,s))continue;
  if(s.cmp==="thinking"){const on=ON[c],st=SET[s.in];
   if(on===undefined||on<0||(s.thinking&&s.thinking!=="off")||!has(q,c,st)||!has(q,on,st))continue;
   if(ok(code(q,c,st),s.la)&&ok(code(q,on,st),s.lb))hits.push([D.configs[c],s.in],[D.configs[on],s.in]);}
  else{const a=SET[s.from],b=SET[s.to];if(!has(q,c,a)||!has(q,c,b))continue;
   if(ok(code(q,c,a),s.la)&&ok(code(q,c,b),s.lb))hits.push([D.configs[c],s.from],[D.configs[c],s.to]);}}
 return hits;}
function anyCfg(q,s){for(let c=0;c<CFG.length;c++)if(cfgOk(c,s)){for(let i=0;i<NS;i++)if(has(q,c,i))return true;}
 return false;}
function matches(q,s){
 if(s.answerable&&String(q.answerable)!==s.answerable)return false;
 if(s.q&&!q.text.includes(s.q.toLowerCase()))return false;
 if((s.model||s.thinking)&&!anyCfg(q,s))return false;
 if(s.flag&&!(q.flags[s.flag]||[]).some(([st,c])=>(!s.setting||D.settings[st]===s.setting)&&cfgOk(c,s)))return false;
 const t=transition(q,s);if(t!==null&&!t.length)return false;q._hits=t||[];return true;}
function glance(q,s){const n={A:0,D:0,X:0,"-":0};
 for(let c=0;c<CFG.length;c++){if(!cfgOk(c,s))continue;for(let i=0;i<NS;i++){
  if(s.setting&&D.settings[i]!==s.setting)continue;const v=code(q,c,i);if(v in n)n[v]++;}}
 return Object.entries(n).filter(([,k])=>k).map(([v,k])=>
  `<span class="dc-l dc-l-${NAMES[v]}">${v==="-"?"no label":NAMES[v]} ${k}</span>`).join("");}
function stub(q,s){const kind=q.answerable?"answerable":"unanswerable";
 const act=asked.has(q.id)&&opened.has(q.id)?`<span class="dc-loading">loading responses…</span>`:
  `<button type="button" class="dc-open" data-open="${esc(q.id)}">responses</button>`;
 return `<section class="dc-q" id="q-${esc(q.id)}" data-id="${esc(q.id)}" data-stub="1"><h2><code>${esc(q.id)}</code> `+
  `<span class="dc-b dc-${kind}">${kind}</span> target page ${esc(q.page||"?")} ${act}</h2>`+
  `<p class="dc-ask">${esc(q.question)}</p><div>${glance(q,s)}</div></section>`;}
function decorate(sec,q,s){
 sec.querySelectorAll(".dc-set").forEach(e=>
  e.classList.toggle("dc-hidden",!!s.setting&&e.dataset.setting!==s.setting));
 sec.querySelectorAll(".dc-row").forEach(e=>{const c=D.configs.indexOf(e.dataset.config);
  e.classList.toggle("dc-hidden",c>=0&&!cfgOk(c,s));
  e.classList.toggle("dc-hit",q._hits.some(([cf,st])=>cf===e.dataset.config&&st===e.dataset.setting));});
 const h2=sec.querySelector("h2");
 if(h2&&!h2.querySelector(".dc-close"))h2.insertAdjacentHTML("beforeend",
  ` <button type="button" class="dc-close" data-close="${esc(q.id)}">hide responses</button>`);}
function load(q){if(asked.has(q.id))return;asked.set(q.id,performance.now());
 const el=document.createElement("script");el.src=D.shards+"/"+q.file;
 el.onerror=()=>{const sec=document.getElementById("q-"+q.id);
  if(sec)sec.insertAdjacentHTML("beforeend",`<p class="dc-err">responses file ${esc(el.src)} is missing: `+
   `rebuild the report (make report)</p>`);};
 document.head.appendChild(el);}
window.dcShard=function(id,shard){const q=BYID.get(id);if(!q)return;loaded.set(id,shard);
 const sec=document.getElementById("q-"+id);
 if(sec&&opened.has(id)){const s=state();matches(q,s);sec.outerHTML=shard.html;
  const now=document.getElementById("q-"+id);decorate(now,q,s);
  now.dataset.openMs=(performance.now()-asked.get(id)).toFixed(1);
  document.dispatchEvent(new CustomEvent("dc-opened",{detail:id}));}};
function render(){const t0=performance.now(),s=state();writeHash(s);
 document.querySelectorAll(".dc-cond").forEach(e=>e.classList.toggle("dc-hidden",s.cmp!=="condition"));
 document.querySelectorAll(".dc-think").forEach(e=>e.classList.toggle("dc-hidden",s.cmp!=="thinking"));
 const list=D.questions.filter(q=>matches(q,s)),out=$("out");
 const page=list.filter((q,i)=>i<shown||opened.has(q.id));  // an opened question shows past the first page
 out.innerHTML=page.map(q=>opened.has(q.id)&&loaded.has(q.id)?loaded.get(q.id).html:stub(q,s)).join("")||
  "<p>No question matches.</p>";
 for(const q of page){if(!opened.has(q.id))continue;
  if(loaded.has(q.id))decorate(document.getElementById("q-"+q.id),q,s);else load(q);}
 $("count").textContent=`${list.length} of ${D.questions.length} questions`+
  (list.length>shown?` (first ${shown} shown${page.length>shown?", and the opened ones":""})`:"");
 $("more").classList.toggle("dc-hidden",list.length<=shown);
 document.body.dataset.renderMs=(performance.now()-t0).toFixed(1);document.body.dataset.matches=list.length;}
readHash();render();document.body.dataset.readyMs=performance.now().toFixed(0);
for(const k of [...KEYS,"la","lb"])$(k).addEventListener(k==="q"?"input":"change",()=>{shown=PAGE;render();});
$("out").addEventListener("click",e=>{const b=e.target.closest("button");if(!b)return;
 if(b.dataset.open!==undefined){opened.add(b.dataset.open);render();}
 else if(b.dataset.close!==undefined){opened.delete(b.dataset.close);render();}});
document.addEventListener("toggle",e=>{const d=e.target;if(!d.dataset||!d.dataset.chunk||!d.open)return;
 const pre=d.querySelector("pre"),sec=d.closest("section.dc-q"),shard=sec&&loaded.get(sec.dataset.id);
 if(!pre.textContent)pre.textContent=(shard&&shard.chunks[d.dataset.chunk])||"(chunk text not in this report)";},true);
$("more").addEventListener("click",()=>{shown+=PAGE;render();});
window.addEventListener("hashchange",()=>{readHash();shown=PAGE;render();});
})();
