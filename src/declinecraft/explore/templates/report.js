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
