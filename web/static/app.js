// The page's behaviour. Every value shown comes from /criteria, from the visitor's own file, or
// from a service answer; text is always set with textContent, never parsed as markup.
'use strict';

// criteria is v1's document (GET /criteria); sets holds every rule set of GET /criteria/index by
// criteria id: {entry, doc, bytes}.
const state = { criteria: null, criteriaBytes: null, engine: null, prepared: null, preparedFor: null, sets: {} };
const MUTATION_LOG = 'mutation-log';

// ---- small DOM helpers -------------------------------------------------------------------
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}
const $ = (id) => document.getElementById(id);
const human = (key) => key.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase());
const fmt = (n) => (typeof n === 'number' ? n.toLocaleString('en-US') : String(n));

// The factors in the order the published factor_rules text numbers them, "(1) scope_presence: …",
// "(5) reopens (terminal mode): …";
// a factor the text does not number goes last. The order is the criteria's, not a ranking. crit is
// the rule set's document (v1's when not given).
function inOrder(names, crit) {
  const c = crit || state.criteria;
  const text = (c && c.texts && c.texts.factor_rules) || '';
  const at = (n) => { const i = text.search(new RegExp('\\(\\d+\\) ' + n + '(:| \\()')); return i < 0 ? Infinity : i; };
  return [...names].sort((a, b) => at(a) - at(b) || (a < b ? -1 : a > b ? 1 : 0));
}

// ---- tabs --------------------------------------------------------------------------------
const tabs = ['criteria', 'precheck', 'report'];
function show(name) {
  for (const t of tabs) {
    const on = t === name;
    $('tab-' + t).setAttribute('aria-selected', on ? 'true' : 'false');
    $('view-' + t).hidden = !on;
  }
}
for (const t of tabs) $('tab-' + t).addEventListener('click', () => show(t));

// ---- the converter (pack compiled to WebAssembly) ----------------------------------------
async function loadEngine() {
  const note = $('pc-engine');
  try {
    const ready = new Promise((resolve) => window.addEventListener('scope-hygiene-ready', resolve, { once: true }));
    const go = new Go();
    const { instance } = await WebAssembly.instantiateStreaming(fetch('/assets/pack.wasm'), go.importObject);
    go.run(instance);
    await ready;
    state.engine = window.scopeHygiene;
    note.textContent = 'The local converter is ready: pack, compiled to WebAssembly, running in this tab.';
    document.body.dataset.engine = 'ready';
  } catch (e) {
    note.textContent = 'The local converter could not start in this browser, so nothing can be prepared or verified here.';
    note.classList.add('error');
  }
}

// ---- criteria explorer -------------------------------------------------------------------
function fact(label, value, extra, mono) {
  return el('div', { class: 'fact' }, el('span', { class: 'label', text: label }),
    el('span', { class: mono ? 'value mono' : 'value', text: value }), extra ? el('span', { class: 'extra', text: extra }) : null);
}

const numberWords = { 5: 'five', 7: 'seven' };
function factorCount(crit) {
  const n = crit.kind === MUTATION_LOG ? Object.keys(crit.gates || {}).length : Object.keys(Object.values(Object.values(crit.assessability_matrix || {})[0] || {})[0] || {}).length;
  return numberWords[n] || String(n);
}

function renderCriteria(c) {
  $('criteria-line').textContent = `${c.criteria_id} · revision ${c.criteria_revision}`;
  const log = c.kind === MUTATION_LOG;
  $('cr-lede').textContent = log
    ? `The audit states ${factorCount(c)} factors of one mutation log (writes, forgets, reopens and session reassignments of a memory store), one by one, under published criteria. Each factor stands on its own; a factor the log cannot support is NOT ASSESSABLE with its reason and carries no number. Everything below is read from GET /criteria/${c.criteria_id} as the service serves it.`
    : `The audit states ${factorCount(c)} factors of one memory-store export, one by one, under published criteria. Everything below is read from GET /criteria as the service serves it.`;
  const caps = log ? fact('Caps', `${fmt(c.caps.events_per_audit)} events`, `${fmt(c.caps.body_bytes)} bytes per body, ${fmt(c.caps.snapshot_entries)} snapshot entries`)
    : fact('Caps', `${fmt(c.caps.records_per_audit)} records`, `${fmt(c.caps.body_bytes)} bytes per body`);
  const facts = $('facts');
  facts.replaceChildren(
    fact('Criteria', c.criteria_id, `revision ${c.criteria_revision}`),
    fact('Program digest', c.criteria_digest, null, true),
    fact('Corpus pin', c.corpus && c.corpus.sha256, c.corpus && c.corpus.id, true),
    el('div', { class: 'fact' }, el('span', { class: 'label', text: 'Price' }),
      el('span', { class: 'value' }, c.price.label, ' ', el('span', { class: 'tag', text: c.price.status })),
      el('span', { class: 'extra', text: c.price.basis })),
    fact('Free pre-check', `${fmt(c.free_tier.per_day)} per day`, `at least ${fmt(c.free_tier.min_interval_ms)} ms apart`),
    caps,
    fact('Report signing key', c.report_signing_key.key_id, c.report_signing_key.alg, true),
  );

  const matrix = $('matrix');
  matrix.replaceChildren();
  $('matrix-heading').textContent = log ? 'Assessability gates by factor' : 'Assessability by family and form';
  $('matrix-hint').textContent = log
    ? 'Each factor\'s gates are tried in order; the first that holds makes the factor NOT ASSESSABLE with this exact reason, and it then carries no number. The pre-check reads the same log facts.'
    : 'What each factor can be for each family and form, with the published note for each cell.';
  if (log) renderGates(c, matrix);
  for (const [family, forms] of Object.entries(log ? {} : c.assessability_matrix)) {
    const fam = c.families[family] || {};
    const factors = inOrder(Object.keys(Object.values(forms)[0] || {}));
    const table = el('table', { class: 'matrix' },
      el('caption', {}, el('span', { class: 'fam', text: family }),
        fam.variants ? el('span', { class: 'hint', text: ` variants: ${fam.variants.join(', ')}` }) : null),
      el('thead', {}, el('tr', {}, el('th', { scope: 'col', text: 'form' }), factors.map((f) => el('th', { scope: 'col', text: human(f) })))),
      el('tbody', {}, Object.entries(forms).map(([form, row]) =>
        el('tr', {}, el('th', { scope: 'row', text: form }),
          factors.map((f) => el('td', {}, el('span', { class: 'status', text: row[f].status }), el('span', { class: 'note', text: row[f].note })))))));
    matrix.append(el('div', { class: 'scroll', tabindex: '0', 'aria-label': `assessability for ${family}` }, table));
  }

  $('texts').replaceChildren(...Object.entries(c.texts).map(([k, v]) =>
    el('details', { class: 'text', 'data-search': (k + ' ' + v).toLowerCase() },
      el('summary', {}, el('span', { class: 'title', text: human(k) }), el('span', { class: 'first', text: v })), el('p', { text: v }))));
  $('readings').replaceChildren(...c.interpretations.map((r) =>
    el('details', { class: 'text', 'data-search': (r.id + ' ' + r.text).toLowerCase() },
      el('summary', {}, el('span', { class: 'tag', text: r.id }), el('span', { class: 'first', text: r.text })),
      el('p', { text: r.text }), el('p', { class: 'hint', text: 'source: ' + r.source }))));
  filterTexts();
}

// renderGates shows a mutation-log rule set's gates (factor by factor, in order) and its refusals.
function renderGates(c, box) {
  const factors = inOrder(Object.keys(c.gates), c);
  box.append(el('div', { class: 'scroll', tabindex: '0', 'aria-label': 'assessability gates' }, el('table', { class: 'matrix gates' },
    el('thead', {}, el('tr', {}, el('th', { scope: 'col', text: 'factor' }), el('th', { scope: 'col', text: 'NOT ASSESSABLE when, in order' }))),
    el('tbody', {}, factors.map((f) => el('tr', { 'data-factor': f }, el('th', { scope: 'row', text: human(f) }),
      el('td', {}, el('ol', { class: 'gates' }, c.gates[f].map((g) => el('li', {}, el('code', { text: g.when }), ' → ', el('span', { class: 'note', text: g.reason })))))))))));
  box.append(el('h3', { text: 'Refusals, in the order they are checked' }),
    el('p', { class: 'hint', text: (c.texts && c.texts.refusal_rule) || '' }),
    el('ol', { class: 'refusals' }, (c.refusals || []).map((r) => el('li', {}, el('code', { text: r })))));
}

// showSet puts one rule set in the explorer.
function showSet(id) {
  const set = state.sets[id];
  if (set && set.doc) renderCriteria(set.doc);
}
$('cr-set').addEventListener('change', () => showSet($('cr-set').value));

function filterTexts() {
  const q = $('text-search').value.trim().toLowerCase();
  const count = (root) => {
    let shown = 0;
    const all = root.querySelectorAll('details');
    for (const a of all) {
      const hit = !q || a.dataset.search.includes(q);
      a.hidden = !hit;
      a.open = Boolean(q) && hit;
      if (hit) shown++;
    }
    return [shown, all.length];
  };
  const [t, tn] = count($('texts'));
  const [r, rn] = count($('readings'));
  $('search-count').textContent = q ? `${t} of ${tn} texts, ${r} of ${rn} readings` : `${tn} texts, ${rn} readings`;
}
$('text-search').addEventListener('input', filterTexts);

// ---- refusals ----------------------------------------------------------------------------
// One line for a refusal: the clause of the published malformed-submission text that names the
// rule, or, for the service's own gates, the published numbers the answer carries.
function explainRefusal(r, crit) {
  const c = crit || state.criteria;
  const text = c && c.texts && (c.texts.malformed_rule || c.texts.refusal_rule);
  if (text && text.includes('(' + r.rule + ')')) {
    const clause = text.split(/[;:]/).find((s) => s.includes('(' + r.rule + ')'));
    if (clause) return clause.trim().replace(/\.$/, '').replace(/^./, (ch) => ch.toUpperCase()) + '.';
  }
  switch (r.rule) {
    case 'body_bytes_cap': return `The body is over the published cap of ${fmt(r.cap)} bytes (this one: ${fmt(r.observed)}).`;
    case 'free_tier_interval': return `Free pre-checks from one caller are at least ${fmt(r.min_interval_ms)} ms apart; try again in ${fmt(r.retry_after_ms)} ms.`;
    case 'free_tier_daily': return 'The free pre-checks of this caller for today are used up.';
    case 'caller_invalid': return 'The caller member is not a Solana public key.';
    case 'export_required': return 'The body is not one well-formed JSON object.';
    default: return readingFor(r.rule, c) || 'The service refused the body under this rule.';
  }
}

// readingFor: a rule set whose refusal text only lists its rules explains each in a published
// reading ("FE-R-11 event_key_invalid: a write, forget or reopen whose key is absent ..."): the
// clause that follows the rule's name, with the reading's id.
function readingFor(rule, c) {
  const reading = ((c && c.interpretations) || []).find((x) => x.text.includes(rule + ':'));
  if (!reading) return '';
  const from = reading.text.slice(reading.text.indexOf(rule + ':') + rule.length + 1).trim();
  const clause = from.split(/; |\. /)[0].replace(/\.$/, '');
  return clause ? `${clause.replace(/^./, (ch) => ch.toUpperCase())} (${reading.id}).` : '';
}

function renderRefusal(r, crit) {
  const nums = Object.entries(r).filter(([k, v]) => typeof v === 'number');
  return el('div', { class: 'refusal', role: 'alert' },
    el('p', { class: 'refused' }, 'Refused under rule ', el('code', { class: 'rule', text: r.rule })),
    el('p', { text: explainRefusal(r, crit) }),
    nums.length ? el('dl', { class: 'counts' }, nums.map(([k, v]) => el('div', {}, el('dt', { text: human(k) }), el('dd', { text: fmt(v) })))) : null);
}

// ---- private pre-check -------------------------------------------------------------------
let fileBytes = null;
let fileName = 'pasted.json';
$('pc-file').addEventListener('change', (ev) => {
  const f = ev.target.files[0];
  fileBytes = null; // read when the body is prepared
  if (!f) return;
  fileName = f.name;
  $('pc-text').value = '';
  if (/\.af$/i.test(f.name)) $('pc-source').value = 'letta-af';
  else if (/\.jsonl$/i.test(f.name)) $('pc-source').value = 'claims-jsonl';
  $('pc-preview').hidden = true;
  sourceChanged();
});

// The rule set a source is checked under: a mutation log goes to the served rule set of that
// kind, everything else to v1.
function setFor(source) {
  if (source !== MUTATION_LOG) return null;
  return Object.values(state.sets).find((s) => s.doc && s.doc.kind === MUTATION_LOG) || null;
}

const hashLabels = {
  export: 'Hash-only: each content text becomes its SHA-256 on this machine, and metadata keeps only the sharing markers',
  log: 'Private: every key name, scope value, principal id and envelope entry becomes a pseudonym made here with a random key that never leaves this tab, keeping exactly the equalities the rules read; members the audit does not read are dropped',
};
function sourceChanged() {
  const log = $('pc-source').value === MUTATION_LOG;
  $('pc-hash-label').textContent = log ? hashLabels.log : hashLabels.export;
  $('pc-preview').hidden = true;
}
$('pc-source').addEventListener('change', sourceChanged);
$('pc-text').addEventListener('input', () => { fileBytes = null; fileName = 'pasted.json'; $('pc-file').value = ''; $('pc-preview').hidden = true; });

function pcError(msg) {
  const e = $('pc-error');
  e.textContent = msg;
  e.hidden = !msg;
}

function hasContentText(v) {
  if (Array.isArray(v)) return v.some(hasContentText);
  if (v && typeof v === 'object') return Object.entries(v).some(([k, x]) => k === 'content_text' || hasContentText(x));
  return false;
}

$('pc-prepare').addEventListener('click', async () => {
  pcError('');
  $('pc-answer').hidden = true;
  $('pc-preview').hidden = true; // before the first await: a preview on the page is always this one
  state.prepared = null;
  if (!state.engine) { pcError('The local converter is not ready yet.'); return; }
  const file = $('pc-file').files[0];
  if (file && !fileBytes) { fileBytes = new Uint8Array(await file.arrayBuffer()); fileName = file.name; }
  const bytes = fileBytes || new TextEncoder().encode($('pc-text').value);
  if (!bytes.length) { pcError('Choose a file or paste an export first.'); return; }
  // A mutation log chosen as a submission is a mutation log: it names its format.
  if ($('pc-source').value === 'submission' && setFor(MUTATION_LOG) && /"format"\s*:\s*"mutation-log"/.test(new TextDecoder().decode(bytes.subarray(0, 4096)))) {
    $('pc-source').value = MUTATION_LOG;
    sourceChanged();
  }
  const source = $('pc-source').value;
  if (source === MUTATION_LOG) { prepareLog(bytes); return; }
  state.preparedFor = null;
  $('pc-route').textContent = 'POST /precheck';
  const out = state.engine.pack(source, fileName, bytes, $('pc-hash').checked);
  if (out.error) { state.prepared = null; $('pc-preview').hidden = true; pcError('Not prepared: ' + out.error); return; }
  const text = new TextDecoder().decode(out.body);
  const body = JSON.parse(text);
  const withText = hasContentText(body);
  state.prepared = out.body;
  const inv = out.inventory ? JSON.parse(out.inventory) : {};
  $('pc-summary').replaceChildren(
    el('li', {}, el('strong', { text: fmt(out.body.length) }), ' bytes, ', el('strong', { text: fmt(out.records) }), ` records, family ${body.family}${body.variant ? ' (' + body.variant + ')' : ''}, form ${out.form}`),
    withText
      ? el('li', { class: 'warn' }, 'Content text leaves this machine: the body carries content_text. Tick hash-only to keep it here.')
      : el('li', {}, 'No content text leaves this machine: each record carries only content_hash.'),
    el('li', {}, 'No wallet and no caller member: the service keys the free allowance by your client address.'),
  );
  const notes = [...(inv.notes || [])];
  for (const [k, v] of Object.entries(inv.dropped || {})) notes.push(`native member ${k} dropped on ${fmt(v)} records`);
  for (const [k, v] of Object.entries(inv.counts || {})) notes.push(`${human(k)}: ${fmt(v)}`);
  $('pc-notes').replaceChildren(...notes.map((n) => el('li', { text: n })));
  $('pc-notes-box').hidden = notes.length === 0;
  $('pc-body').textContent = JSON.stringify(body, null, 2);
  $('pc-preview').hidden = false;
  $('pc-send').focus();
});

// prepareLog masks a mutation log here (web/internal/logmask in the WebAssembly module) with a
// fresh random key, or takes it as it is when the visitor unticks the box.
function prepareLog(bytes) {
  const set = setFor(MUTATION_LOG);
  if (!set) { pcError('This service serves no mutation-log rule set.'); return; }
  let body = bytes;
  let out = null;
  if ($('pc-hash').checked) {
    out = state.engine.maskLog(bytes, crypto.getRandomValues(new Uint8Array(32)));
    if (out.error) { pcError('Not prepared: ' + out.error + '.'); return; }
    body = out.body;
  }
  let doc = null;
  try { doc = JSON.parse(new TextDecoder().decode(body)); } catch (e) { doc = null; }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) { pcError('Not prepared: the log is not one JSON object.'); return; }
  state.prepared = body;
  state.preparedFor = set;
  $('pc-route').textContent = 'POST ' + set.entry.precheck;
  const events = Array.isArray(doc.events) ? doc.events.length : 0;
  $('pc-summary').replaceChildren(
    el('li', {}, el('strong', { text: fmt(body.length) }), ' bytes, ', el('strong', { text: fmt(events) }), ` events, forget mode ${doc.forget_mode}, for ${set.entry.criteria_id}`),
    out
      ? el('li', {}, `No identifier leaves this machine: ${fmt(out.masked)} distinct key names, scope values and principal ids are pseudonyms; the ${fmt(out.labels)} scope dimension names are kept (the report prints them).`)
      : el('li', { class: 'warn' }, 'Identifiers leave this machine: the log is sent as it is. Tick the box to send pseudonyms instead.'),
    el('li', {}, 'No wallet and no caller member: the service keys the free allowance by your client address.'),
  );
  const notes = out ? [`${fmt(out.dropped)} members the audit does not read dropped (caller and unknown members)`,
    'Seqs, versions, operations, envelopes and authority checks are kept as written'] : [];
  $('pc-notes').replaceChildren(...notes.map((n) => el('li', { text: n })));
  $('pc-notes-box').hidden = notes.length === 0;
  $('pc-body').textContent = JSON.stringify(doc, null, 2);
  $('pc-preview').hidden = false;
  $('pc-send').focus();
}

// post sends the prepared body to a route and returns the exact answer bytes and their parse.
async function post(route) {
  const res = await fetch(route, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: state.prepared });
  const raw = new Uint8Array(await res.arrayBuffer());
  let doc = null;
  try { doc = JSON.parse(new TextDecoder().decode(raw)); } catch (e) { doc = null; }
  return { res, raw, doc };
}

function toVerifier(raw) {
  $('rv-file').value = ''; rvBytes = raw; $('rv-text').value = new TextDecoder().decode(raw); show('report'); verify();
}

$('pc-send').addEventListener('click', async () => {
  if (!state.prepared) return;
  $('pc-send').disabled = true;
  const set = state.preparedFor;
  const crit = set ? set.doc : state.criteria;
  try {
    const { res, raw, doc } = await post(set ? set.entry.precheck : '/precheck');
    const box = $('pc-result');
    if (doc && doc.kind === 'refusal') box.replaceChildren(renderRefusal(doc, crit));
    else if (doc && doc.kind === 'precheck_result') {
      box.replaceChildren(renderPrecheck(doc),
        el('button', { type: 'button', class: 'secondary', id: 'pc-to-verify' }, 'Verify this signed answer'));
      $('pc-to-verify').addEventListener('click', () => toVerifier(raw));
      // An unpriced rule set's audit is free under the pre-check's allowance: offer it.
      if (set && set.entry.price && set.entry.price.usdc_units === 0) {
        const gap = crit.free_tier ? crit.free_tier.min_interval_ms : 0;
        box.append(' ', el('button', { type: 'button', class: 'primary', id: 'pc-audit' }, `Get the signed audit: POST ${set.entry.audit} (free)`),
          el('p', { class: 'hint', text: `The same body. Free calls of one caller are at least ${fmt(gap)} ms apart.` }));
        $('pc-audit').addEventListener('click', () => freeAudit(set, crit));
      }
    } else box.replaceChildren(el('p', { class: 'error', text: `The service answered HTTP ${res.status} without a result this page knows.` }));
    $('pc-answer').hidden = false;
  } catch (e) {
    pcError('The pre-check could not reach the service.');
  } finally {
    $('pc-send').disabled = false;
  }
});

async function freeAudit(set, crit) {
  const button = $('pc-audit');
  button.disabled = true;
  try {
    const { res, raw, doc } = await post(set.entry.audit);
    if (doc && doc.kind === 'audit_report') { toVerifier(raw); return; }
    const box = $('pc-result');
    box.append(doc && doc.kind === 'refusal' ? renderRefusal(doc, crit)
      : el('p', { class: 'error', text: `The service answered HTTP ${res.status} without a result this page knows.` }));
  } catch (e) {
    pcError('The audit could not reach the service.');
  } finally {
    button.disabled = false;
  }
}

// Dropping a file on a step card is the same as choosing it in that card's file input.
function dropInto(zone, input) {
  zone.addEventListener('dragover', (ev) => { ev.preventDefault(); zone.classList.add('dropping'); });
  zone.addEventListener('dragleave', () => zone.classList.remove('dropping'));
  zone.addEventListener('drop', (ev) => {
    ev.preventDefault();
    zone.classList.remove('dropping');
    if (!ev.dataTransfer || !ev.dataTransfer.files.length) return;
    input.files = ev.dataTransfer.files;
    input.dispatchEvent(new Event('change'));
  });
}
dropInto($('pc-drop'), $('pc-file'));
dropInto($('rv-drop'), $('rv-file'));

// ---- rendering results -------------------------------------------------------------------
const NA = 'NOT ASSESSABLE';

// critOf is the document of the rule set a result names (v1's when the page does not know it).
function critOf(doc) {
  const set = doc && state.sets[doc.criteria_id];
  return (set && set.doc) || state.criteria;
}

function meta(doc) {
  const log = doc.forget_mode !== undefined;
  const items = log
    ? [['Forget mode', doc.forget_mode], ['Events', fmt(doc.events)], doc.forgets !== undefined ? ['Forgets', fmt(doc.forgets)] : null]
    : [['Family', doc.family + (doc.variant ? ' (' + doc.variant + ')' : '')], ['Form', doc.form], ['Records', fmt(doc.records)], ['Live', fmt(doc.live)]];
  items.push(['Criteria', `${doc.criteria_id} ${doc.criteria_revision}`], [doc.kind === 'audit_report' ? 'Checked' : 'Pre-checked', doc.check_end || doc.checked_at]);
  return el('dl', { class: 'meta' }, items.filter(Boolean).map(([k, v]) => el('div', {}, el('dt', { text: k }), el('dd', { text: v }))));
}

function renderPrecheck(doc) {
  const published = Boolean(doc.matrix_row);
  const rows = inOrder(Object.keys(doc.factors), critOf(doc)).map((f) => {
    const s = doc.factors[f];
    const m = (doc.matrix_row || {})[f] || {};
    return el('tr', { 'data-factor': f }, el('th', { scope: 'row', text: human(f) }),
      el('td', {}, el('span', { class: 'status', text: s.status }), s.reason ? el('span', { class: 'note', text: s.reason }) : null),
      published ? el('td', {}, el('span', { class: 'status', text: m.status || '' }), el('span', { class: 'note', text: m.note || '' })) : null);
  });
  const what = doc.forget_mode !== undefined ? 'log' : 'export';
  return el('div', { class: 'precheck' }, meta(doc),
    el('p', { class: 'hint', text: `A pre-check computes no factor: it says which factors this ${what} can support.` }),
    el('div', { class: 'scroll' }, el('table', { class: published ? 'matrix' : 'matrix narrow' },
      el('thead', {}, el('tr', {}, el('th', { scope: 'col', text: 'factor' }), el('th', { scope: 'col', text: `for this ${what}` }),
        published ? el('th', { scope: 'col', text: 'published for the family and form' }) : null)),
      el('tbody', {}, rows))));
}

function isRate(v) { return v && typeof v === 'object' && 'numerator' in v && 'denominator' in v && 'value' in v; }

function rate(label, r) {
  if (r.value === NA) {
    return el('div', { class: 'rate na' }, el('span', { class: 'label', text: label }), el('span', { class: 'status', text: NA }), el('span', { class: 'note', text: r.reason }));
  }
  const fill = el('span', { class: 'fill' });
  fill.style.width = (r.denominator ? (100 * r.numerator) / r.denominator : 0) + '%';
  return el('div', { class: 'rate' }, el('span', { class: 'label', text: label }),
    el('span', { class: 'pct', text: r.value }),
    el('span', { class: 'bar', role: 'img', 'aria-label': `${r.numerator} of ${r.denominator}` }, fill),
    el('span', { class: 'frac', text: `${fmt(r.numerator)} of ${fmt(r.denominator)}` }));
}

function factorPanel(name, f) {
  const panel = el('section', { class: 'panel', 'data-factor': name, 'data-status': f.status },
    el('h3', { text: human(name) }), el('p', { class: 'status', text: f.status }));
  if (f.status === NA) {
    panel.append(el('p', { class: 'reason', text: f.reason }));
    return panel;
  }
  const counts = [];
  const lists = [];
  for (const [k, v] of Object.entries(f)) {
    if (isRate(v)) panel.append(rate(k === 'rate' ? 'Rate' : human(k), v));
    else if (typeof v === 'number') counts.push([k, v]);
    else if (Array.isArray(v) && (/(^|_)(seqs|indexes)$/.test(k) || k === 'without_envelope')) lists.push([k, v]);
  }
  if (f.by_subcheck) for (const [k, v] of Object.entries(f.by_subcheck)) counts.push(['conflicts: ' + k, v]);
  panel.append(el('dl', { class: 'counts' }, counts.map(([k, v]) => el('div', {}, el('dt', { text: human(k) }), el('dd', { text: fmt(v) })))));
  // Event seqs and snapshot indexes (mutation logs): where to look in the log, never a value.
  if (lists.length) {
    panel.append(el('dl', { class: 'lists' }, lists.map(([k, v]) => el('div', {}, el('dt', { text: human(k) + (k === 'without_envelope' ? ' (seqs)' : '') }),
      el('dd', {}, v.length ? v.map((n) => el('code', { class: 'chip', text: String(n) })) : el('span', { class: 'hint', text: 'none' }))))));
  }
  return panel;
}

function clusterTable(clusters) {
  return el('div', { class: 'scroll', tabindex: '0', 'aria-label': 'cross-scope clusters' }, el('table', { class: 'data' },
    el('thead', {}, el('tr', {}, ['cluster', 'members', 'distinct scopes', 'classification', 'decided by', 'statement'].map((h) => el('th', { scope: 'col', text: h })))),
    el('tbody', {}, clusters.map((c) => el('tr', {},
      el('td', { text: c.cluster }),
      el('td', {}, el('ul', { class: 'members' }, c.members.map((m) => el('li', {}, el('code', { text: m.id }), ' in ', el('code', { text: m.scope }),
        m.global ? ' (global)' : '', m.covered ? ' (covered)' : '')))),
      el('td', { text: fmt(c.distinct_scopes) }),
      el('td', { text: c.classification.replace('_', ' ') }),
      el('td', {}, el('code', { text: c.decided_by })),
      el('td', { class: 'statement', text: c.statement }))))));
}

function renderReport(doc) {
  const out = [el('div', { class: 'verdict' }, el('span', { class: 'label', text: 'Verdict line, as signed' }), el('p', { class: 'line', text: doc.verdict_line })), meta(doc)];
  const panels = el('div', { class: 'panels' });
  const names = inOrder(Object.keys(doc.factors), critOf(doc));
  for (const name of names) panels.append(factorPanel(name, doc.factors[name]));
  out.push(el('h2', { text: `The ${numberWords[names.length] || names.length} factors, one by one` }), panels);
  const cs = doc.factors.cross_scope_clusters;
  if (cs && cs.status !== NA) {
    out.push(el('h2', { text: 'Cross-scope identical-content clusters' }),
      cs.clusters.length ? clusterTable(cs.clusters) : el('p', { class: 'hint', text: 'No cross-scope cluster.' }));
  }
  const sc = doc.factors.scope_conflicts;
  if (sc && sc.status !== NA) {
    out.push(el('h2', { text: 'Scope conflicts by sub-check' }), el('div', { class: 'scroll' }, el('table', { class: 'data' },
      el('thead', {}, el('tr', {}, ['sub-check', 'conflicts', 'records'].map((h) => el('th', { scope: 'col', text: h })))),
      el('tbody', {}, Object.entries(sc.by_subcheck).map(([k, n]) => el('tr', {}, el('td', {}, el('code', { text: k })), el('td', { text: fmt(n) }),
        el('td', {}, (sc.records[k] || []).map((id) => el('code', { class: 'chip', text: id })))))))));
    if (sc.referrals && sc.referrals.length) out.push(el('p', {}, 'Referrals: ', sc.referrals.map((id) => el('code', { class: 'chip', text: id }))));
  }
  const du = doc.factors.duplicates;
  if (du && du.status !== NA) {
    out.push(el('h2', { text: 'Duplicate clusters' }), du.clusters.length ? el('div', { class: 'scroll' }, el('table', { class: 'data' },
      el('thead', {}, el('tr', {}, ['cluster', 'partition', 'scope', 'copies', 'members'].map((h) => el('th', { scope: 'col', text: h })))),
      el('tbody', {}, du.clusters.map((c) => el('tr', {}, el('td', { text: c.cluster }), el('td', { text: c.partition }), el('td', {}, el('code', { text: c.scope })),
        el('td', { text: fmt(c.count) }), el('td', {}, c.members.map((id) => el('code', { class: 'chip', text: id }))))))))
      : el('p', { class: 'hint', text: 'No duplicate cluster.' }));
  }
  if (doc.coverage) {
    const rows = [];
    const walk = (prefix, o) => { for (const [k, v] of Object.entries(o)) {
      if (v && typeof v === 'object' && !Array.isArray(v)) walk(prefix + k + ': ', v);
      else rows.push([prefix + k, Array.isArray(v) ? v.join(', ') : v]);
    } };
    walk('', doc.coverage);
    out.push(el('details', { class: 'coverage' }, el('summary', { text: 'Coverage: what the audit looked at' }),
      el('dl', { class: 'counts' }, rows.map(([k, v]) => el('div', {}, el('dt', { text: human(k) }), el('dd', { text: typeof v === 'number' ? fmt(v) : v }))))));
  }
  out.push(el('div', { class: 'statements' }, el('p', { text: doc.honesty_line }), el('p', { text: doc.scope_statement })));
  return out;
}

// ---- verification ------------------------------------------------------------------------
let rvBytes = null;
$('rv-file').addEventListener('change', () => { rvBytes = null; $('rv-text').value = ''; });
$('rv-text').addEventListener('input', () => { rvBytes = null; $('rv-file').value = ''; });
$('rv-verify').addEventListener('click', () => verify());

function check(ok, text) {
  return el('li', { class: ok === true ? 'ok' : ok === false ? 'no' : 'skip' },
    el('span', { class: 'mark', 'aria-hidden': 'true', text: ok === true ? '✓' : ok === false ? '✗' : '–' }), el('span', { class: 'what', text }));
}

async function verify() {
  const box = $('rv-check');
  const result = $('rv-result');
  result.replaceChildren();
  box.hidden = false;
  box.className = 'verify';
  delete box.dataset.outcome; // before the first await: an outcome on the page is always this check's
  const file = $('rv-file').files[0];
  if (file) {
    rvBytes = new Uint8Array(await file.arrayBuffer());
    $('rv-text').value = new TextDecoder().decode(rvBytes);
  }
  const bytes = rvBytes || new TextEncoder().encode($('rv-text').value);
  const head = el('h2', {});
  const list = el('ul', { class: 'checks' });
  box.replaceChildren(head, list);
  const finish = (cls, title) => { box.classList.add(cls); box.dataset.outcome = cls; head.textContent = title; };
  if (!bytes.length) { finish('fail', 'Nothing to verify'); list.append(check(false, 'Choose a saved result or paste it first.')); return; }
  if (!state.engine || !state.criteriaBytes) { finish('fail', 'Not checked'); list.append(check(false, 'The local converter or the criteria did not load.')); return; }
  let doc = null;
  try { doc = JSON.parse(new TextDecoder().decode(bytes)); } catch (e) { doc = null; }
  // The key is the one the result's own criteria document publishes (every rule set of this
  // service signs with the service's key; the document says which).
  const set = doc && typeof doc === 'object' ? state.sets[doc.criteria_id] : null;
  const docName = set && set.doc !== state.criteria ? set.entry.document : '/criteria';
  const key = state.engine.publishedKey(set && set.bytes ? set.bytes : state.criteriaBytes);
  if (key.error) { finish('fail', 'Not checked'); list.append(check(false, `The key ${docName} publishes: ` + key.error)); return; }
  const m = state.engine.signedMessage(bytes);
  if (m.error) {
    finish('fail', 'Does not verify');
    list.append(check(false, `The bytes: ${m.error}.`));
    list.append(check(null, 'The signature was not checked.'));
    if (doc && typeof doc === 'object') result.replaceChildren(el('p', { class: 'hint', text: 'The content below is not shown: a result that does not verify is not rendered.' }));
    return;
  }
  list.append(check(true, `The bytes are exactly the RFC 8785 canonical form of the result, with a well-formed signature block (${fmt(bytes.length)} bytes).`));
  const sameKey = m.keyId === key.keyId;
  list.append(check(sameKey, sameKey ? `It names the key ${docName} publishes: ${key.keyId}.` : `It names key ${m.keyId}; ${docName} publishes ${key.keyId}.`));
  if (!sameKey) { finish('fail', 'Does not verify'); return; }
  if (set) {
    const same = doc.criteria_digest === set.entry.criteria_digest;
    list.append(check(same ? true : null, same
      ? `It is tied to ${doc.criteria_id} revision ${doc.criteria_revision}, program digest ${doc.criteria_digest}, which this service serves now.`
      : `It names ${doc.criteria_id} revision ${doc.criteria_revision} with digest ${doc.criteria_digest}; this service now serves ${set.entry.criteria_digest} (another revision).`));
  }
  if (!(window.crypto && crypto.subtle)) {
    finish('unsupported', 'Not checked: this browser has no WebCrypto');
    list.append(check(null, 'WebCrypto is not available here (it needs a secure context such as https or localhost). Use scope-hygiene verify instead.'));
    renderVerified(doc, result);
    return;
  }
  let pub;
  try {
    pub = await crypto.subtle.importKey('raw', key.publicKey, { name: 'Ed25519' }, false, ['verify']);
  } catch (e) {
    finish('unsupported', 'Not checked: this browser lacks WebCrypto Ed25519');
    list.append(check(null, 'This browser cannot verify Ed25519 signatures with WebCrypto, so the signature was not checked. Use scope-hygiene verify -key criteria.json result.json instead.'));
    renderVerified(doc, result);
    return;
  }
  const ok = await crypto.subtle.verify({ name: 'Ed25519' }, pub, m.signature, m.message);
  list.append(check(ok, ok ? 'The Ed25519 signature verifies over the canonical form without its signature member (WebCrypto).'
    : 'The Ed25519 signature does not verify over the canonical form without its signature member (WebCrypto).'));
  if (!ok) { finish('fail', 'Does not verify'); return; }
  finish('pass', 'Verified');
  renderVerified(doc, result);
}

function renderVerified(doc, result) {
  if (doc.kind === 'audit_report') result.replaceChildren(...renderReport(doc));
  else if (doc.kind === 'precheck_result') result.replaceChildren(el('h2', { text: `Pre-check answer (${doc.criteria_id})` }), renderPrecheck(doc));
  else result.replaceChildren(el('p', { class: 'hint', text: 'A signed result of a kind this page does not render.' }));
}

// ---- start -------------------------------------------------------------------------------
// loadSets reads GET /criteria/index and every other rule set's document, for the explorer's
// chooser, the mutation-log pre-check and the verifier's keys.
async function loadSets() {
  const res = await fetch('/criteria/index');
  if (!res.ok) return;
  const index = await res.json();
  const select = $('cr-set');
  select.replaceChildren();
  for (const entry of index.criteria || []) {
    if (entry.criteria_id === state.criteria.criteria_id) {
      state.sets[entry.criteria_id].entry = entry;
    } else {
      const r = await fetch(entry.document);
      const bytes = new Uint8Array(await r.arrayBuffer());
      state.sets[entry.criteria_id] = { entry, bytes, doc: JSON.parse(new TextDecoder().decode(bytes)) };
    }
    select.append(el('option', { value: entry.criteria_id, text: `${entry.criteria_id} (revision ${entry.criteria_revision})` }));
  }
  select.value = state.criteria.criteria_id;
  const log = $('pc-source').querySelector(`option[value="${MUTATION_LOG}"]`);
  if (log) log.disabled = !setFor(MUTATION_LOG);
}

async function start() {
  loadEngine();
  try {
    const res = await fetch('/criteria');
    state.criteriaBytes = new Uint8Array(await res.arrayBuffer());
    state.criteria = JSON.parse(new TextDecoder().decode(state.criteriaBytes));
    state.sets[state.criteria.criteria_id] = { entry: { criteria_id: state.criteria.criteria_id, criteria_digest: state.criteria.criteria_digest,
      document: '/criteria', precheck: '/precheck', audit: '/audit', price: { usdc_units: state.criteria.price.usdc_units_per_call } },
    doc: state.criteria, bytes: state.criteriaBytes };
    renderCriteria(state.criteria);
    await loadSets();
  } catch (e) {
    $('criteria-line').textContent = 'The criteria could not be loaded from this service.';
  }
  document.body.dataset.ready = 'true';
}
start();
