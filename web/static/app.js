// The page's behaviour. Every value shown comes from /criteria, from the visitor's own file, or
// from a service answer; text is always set with textContent, never parsed as markup.
'use strict';

const state = { criteria: null, criteriaBytes: null, engine: null, prepared: null };

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

// The factors in the order the published factor_rules text numbers them, "(1) scope_presence: …";
// a factor the text does not number goes last. The order is the criteria's, not a ranking.
function inOrder(names) {
  const text = (state.criteria && state.criteria.texts && state.criteria.texts.factor_rules) || '';
  const at = (n) => { const i = text.search(new RegExp('\\(\\d+\\) ' + n + ':')); return i < 0 ? Infinity : i; };
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

function renderCriteria(c) {
  $('criteria-line').textContent = `${c.criteria_id} · revision ${c.criteria_revision}`;
  const facts = $('facts');
  facts.replaceChildren(
    fact('Criteria', c.criteria_id, `revision ${c.criteria_revision}`),
    fact('Program digest', c.criteria_digest, null, true),
    fact('Corpus pin', c.corpus && c.corpus.sha256, c.corpus && c.corpus.id, true),
    el('div', { class: 'fact' }, el('span', { class: 'label', text: 'Price' }),
      el('span', { class: 'value' }, c.price.label, ' ', el('span', { class: 'tag', text: c.price.status })),
      el('span', { class: 'extra', text: c.price.basis })),
    fact('Free pre-check', `${fmt(c.free_tier.per_day)} per day`, `at least ${fmt(c.free_tier.min_interval_ms)} ms apart`),
    fact('Caps', `${fmt(c.caps.records_per_audit)} records`, `${fmt(c.caps.body_bytes)} bytes per body`),
    fact('Report signing key', c.report_signing_key.key_id, c.report_signing_key.alg, true),
  );

  const matrix = $('matrix');
  matrix.replaceChildren();
  for (const [family, forms] of Object.entries(c.assessability_matrix)) {
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
function explainRefusal(r) {
  const c = state.criteria;
  const text = c && c.texts && c.texts.malformed_rule;
  if (text && text.includes('(' + r.rule + ')')) {
    const clause = text.split(/[;:]/).find((s) => s.includes('(' + r.rule + ')'));
    if (clause) return clause.trim().replace(/\.$/, '').replace(/^./, (ch) => ch.toUpperCase()) + '.';
  }
  switch (r.rule) {
    case 'body_bytes_cap': return `The body is over the published cap of ${fmt(r.cap)} bytes (this one: ${fmt(r.observed)}).`;
    case 'free_tier_interval': return `Free pre-checks from one caller are at least ${fmt(r.min_interval_ms)} ms apart; try again in ${fmt(r.retry_after_ms)} ms.`;
    case 'free_tier_daily': return 'The free pre-checks of this caller for today are used up.';
    case 'caller_invalid': return 'The caller member is not a Solana public key.';
    default: return 'The service refused the body under this rule.';
  }
}

function renderRefusal(r) {
  const nums = Object.entries(r).filter(([k, v]) => typeof v === 'number');
  return el('div', { class: 'refusal', role: 'alert' },
    el('p', { class: 'refused' }, 'Refused under rule ', el('code', { class: 'rule', text: r.rule })),
    el('p', { text: explainRefusal(r) }),
    nums.length ? el('dl', { class: 'counts' }, nums.map(([k, v]) => [el('dt', { text: human(k) }), el('dd', { text: fmt(v) })])) : null);
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
});
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
  const source = $('pc-source').value;
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

$('pc-send').addEventListener('click', async () => {
  if (!state.prepared) return;
  $('pc-send').disabled = true;
  try {
    const res = await fetch('/precheck', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: state.prepared });
    const raw = new Uint8Array(await res.arrayBuffer());
    let doc = null;
    try { doc = JSON.parse(new TextDecoder().decode(raw)); } catch (e) { doc = null; }
    const box = $('pc-result');
    if (doc && doc.kind === 'refusal') box.replaceChildren(renderRefusal(doc));
    else if (doc && doc.kind === 'precheck_result') {
      box.replaceChildren(renderPrecheck(doc),
        el('button', { type: 'button', class: 'secondary', id: 'pc-to-verify' }, 'Verify this signed answer'));
      $('pc-to-verify').addEventListener('click', () => { $('rv-file').value = ''; rvBytes = raw; $('rv-text').value = new TextDecoder().decode(raw); show('report'); verify(); });
    } else box.replaceChildren(el('p', { class: 'error', text: `The service answered HTTP ${res.status} without a result this page knows.` }));
    $('pc-answer').hidden = false;
  } catch (e) {
    pcError('The pre-check could not reach the service.');
  } finally {
    $('pc-send').disabled = false;
  }
});

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

function meta(doc) {
  const items = [['Family', doc.family + (doc.variant ? ' (' + doc.variant + ')' : '')], ['Form', doc.form],
    ['Records', fmt(doc.records)], ['Live', fmt(doc.live)], ['Criteria', `${doc.criteria_id} ${doc.criteria_revision}`],
    [doc.kind === 'audit_report' ? 'Checked' : 'Pre-checked', doc.check_end || doc.checked_at]];
  return el('dl', { class: 'meta' }, items.map(([k, v]) => el('div', {}, el('dt', { text: k }), el('dd', { text: v }))));
}

function renderPrecheck(doc) {
  const rows = inOrder(Object.keys(doc.factors)).map((f) => {
    const s = doc.factors[f];
    const m = (doc.matrix_row || {})[f] || {};
    return el('tr', { 'data-factor': f }, el('th', { scope: 'row', text: human(f) }),
      el('td', {}, el('span', { class: 'status', text: s.status }), s.reason ? el('span', { class: 'note', text: s.reason }) : null),
      el('td', {}, el('span', { class: 'status', text: m.status || '' }), el('span', { class: 'note', text: m.note || '' })));
  });
  return el('div', { class: 'precheck' }, meta(doc),
    el('p', { class: 'hint', text: 'A pre-check computes no factor: it says which factors this export can support.' }),
    el('div', { class: 'scroll' }, el('table', { class: 'matrix' },
      el('thead', {}, el('tr', {}, el('th', { scope: 'col', text: 'factor' }), el('th', { scope: 'col', text: 'for this export' }), el('th', { scope: 'col', text: 'published for the family and form' }))),
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
  for (const [k, v] of Object.entries(f)) {
    if (isRate(v)) panel.append(rate(k === 'rate' ? 'Rate' : human(k), v));
    else if (typeof v === 'number') counts.push([k, v]);
  }
  if (f.by_subcheck) for (const [k, v] of Object.entries(f.by_subcheck)) counts.push(['conflicts: ' + k, v]);
  panel.append(el('dl', { class: 'counts' }, counts.map(([k, v]) => el('div', {}, el('dt', { text: human(k) }), el('dd', { text: fmt(v) })))));
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
  for (const name of inOrder(Object.keys(doc.factors))) panels.append(factorPanel(name, doc.factors[name]));
  out.push(el('h2', { text: 'The five factors, one by one' }), panels);
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
    el('span', { class: 'mark', 'aria-hidden': 'true', text: ok === true ? '✓' : ok === false ? '✗' : '–' }), text);
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
  const key = state.engine.publishedKey(state.criteriaBytes);
  if (key.error) { finish('fail', 'Not checked'); list.append(check(false, 'The key /criteria publishes: ' + key.error)); return; }
  const m = state.engine.signedMessage(bytes);
  let doc = null;
  try { doc = JSON.parse(new TextDecoder().decode(bytes)); } catch (e) { doc = null; }
  if (m.error) {
    finish('fail', 'Does not verify');
    list.append(check(false, `The bytes: ${m.error}.`));
    list.append(check(null, 'The signature was not checked.'));
    if (doc && typeof doc === 'object') result.replaceChildren(el('p', { class: 'hint', text: 'The content below is not shown: a result that does not verify is not rendered.' }));
    return;
  }
  list.append(check(true, `The bytes are exactly the RFC 8785 canonical form of the result, with a well-formed signature block (${fmt(bytes.length)} bytes).`));
  const sameKey = m.keyId === key.keyId;
  list.append(check(sameKey, sameKey ? `It names the key /criteria publishes: ${key.keyId}.` : `It names key ${m.keyId}; /criteria publishes ${key.keyId}.`));
  if (!sameKey) { finish('fail', 'Does not verify'); return; }
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
  else if (doc.kind === 'precheck_result') result.replaceChildren(el('h2', { text: 'Pre-check answer' }), renderPrecheck(doc));
  else result.replaceChildren(el('p', { class: 'hint', text: 'A signed result of a kind this page does not render.' }));
}

// ---- start -------------------------------------------------------------------------------
async function start() {
  loadEngine();
  try {
    const res = await fetch('/criteria');
    state.criteriaBytes = new Uint8Array(await res.arrayBuffer());
    state.criteria = JSON.parse(new TextDecoder().decode(state.criteriaBytes));
    renderCriteria(state.criteria);
  } catch (e) {
    $('criteria-line').textContent = 'The criteria could not be loaded from this service.';
  }
  document.body.dataset.ready = 'true';
}
start();
