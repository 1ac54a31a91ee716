// The ksched console: plain JavaScript over the server's /debug endpoints.
// Every answer is rendered with textContent (never as HTML), and nothing
// is asked of the server unless a view is open.
'use strict';

const TOKEN_KEY = 'ksched-token';
const state = { view: null, timer: null, renderSeq: 0, nodes: [], explain: null, sort: null };

// --- small utilities -----------------------------------------------------------

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const k of kids) {
    if (k === null || k === undefined) continue;
    e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  }
  return e;
}
const $ = (id) => document.getElementById(id);
function clear(e) { while (e.firstChild) e.removeChild(e.firstChild); }
function fmtTime(t) { return t ? new Date(t * 1000).toLocaleTimeString() : ''; }
function fmtSec(s) {
  if (s === undefined || s === null || s < 0) return '';
  if (s < 1e-3) return (s * 1e6).toFixed(0) + ' µs';
  if (s < 1) return (s * 1e3).toFixed(2) + ' ms';
  return s.toFixed(2) + ' s';
}
function fmtBytes(b) {
  const u = ['B', 'Ki', 'Mi', 'Gi', 'Ti'];
  let i = 0;
  while (b >= 1024 && i < u.length - 1) { b /= 1024; i++; }
  return (i ? b.toFixed(1) : b) + u[i];
}
function fmtRes(k, v) {
  if (k === 'cpu') return (v / 1000).toFixed(v % 1000 ? 2 : 0);
  if (k === 'memory' || k === 'ephemeralStorage') return fmtBytes(v);
  return String(v);
}
function setStatus(text) { $('status').textContent = text; }

// --- the API, with the token of --token-file when the server asks -------------

let tokenWaiters = null;
function askToken(message) {
  if (!tokenWaiters) {
    tokenWaiters = [];
    $('token-error').textContent = message || '';
    $('token-input').value = '';
    const d = $('token-dialog');
    if (!d.open) d.showModal();
  }
  return new Promise((resolve) => tokenWaiters.push(resolve));
}
function tokenGiven(ev) {
  ev.preventDefault();
  const t = $('token-input').value.trim();
  if (!t) return;
  sessionStorage.setItem(TOKEN_KEY, t);
  $('token-dialog').close();
  const w = tokenWaiters || [];
  tokenWaiters = null;
  w.forEach((r) => r());
}

async function api(path, opts) {
  for (let tries = 0; tries < 5; tries++) {
    const headers = {};
    const tok = sessionStorage.getItem(TOKEN_KEY);
    if (tok) headers.Authorization = 'Bearer ' + tok;
    const r = await fetch(path, Object.assign({ headers }, opts || {}));
    if (r.status === 401) {
      await askToken(tok ? 'That token was refused.' : '');
      continue;
    }
    const body = await r.json().catch(() => null);
    if (!r.ok) {
      const msg = body && body.message ? body.message : r.status + ' ' + r.statusText;
      const e = new Error(msg);
      e.status = r.status;
      throw e;
    }
    return body;
  }
  throw new Error('not authorized');
}

// --- views -----------------------------------------------------------------

const views = {
  cluster: { show: showCluster },
  queue: { show: showQueue },
  pod: { show: showPod },
  plugins: { show: showPlugins },
  shadow: { show: showShadow },
  rates: { show: showRates, every: 2000 },
};

function route() {
  const h = decodeURIComponent(location.hash.replace(/^#/, '')) || 'cluster';
  const parts = h.split('/');
  const name = views[parts[0]] ? parts[0] : 'cluster';
  if (state.timer) { clearInterval(state.timer); state.timer = null; }
  state.view = name;
  for (const s of document.querySelectorAll('.view')) s.hidden = s.id !== 'view-' + name;
  for (const a of document.querySelectorAll('#tabs a')) a.classList.toggle('active', a.dataset.view === name);
  const v = views[name];
  const run = () => v.show(parts.slice(1)).catch((e) => setStatus(name + ': ' + e.message));
  run();
  if (v.every) state.timer = setInterval(run, v.every);
}

// --- Cluster ---------------------------------------------------------------

async function loadNodes() {
  const nodes = [];
  let cont = '';
  let total = 0;
  do {
    const q = '/debug/cluster?limit=1000&fields=labels,pods' + (cont ? '&continue=' + encodeURIComponent(cont) : '');
    const page = await api(q);
    nodes.push(...page.items);
    total = page.total;
    cont = page.continue || '';
    $('cluster-summary').textContent = 'loading ' + nodes.length + ' / ' + total + ' nodes...';
  } while (cont);
  return nodes;
}

function nodeText(n) {
  const parts = [n.name, n.zone || ''];
  for (const [k, v] of Object.entries(n.labels || {})) parts.push(k + '=' + v);
  for (const t of n.taints) parts.push(t.key + '=' + t.value + ':' + t.effect);
  return parts.join(' ').toLowerCase();
}

function bar(label, used, total, key) {
  const pct = total > 0 ? Math.min(100, (100 * used) / total) : (used > 0 ? 100 : 0);
  return el('div', { class: 'bar', title: label + ': ' + fmtRes(key, used) + ' of ' + fmtRes(key, total) + ' requested' },
    el('span', { class: 'k', text: label }),
    el('div', { class: 'track' }, el('div', { class: 'fill' + (pct > 90 ? ' high' : ''), style: 'width:' + pct.toFixed(1) + '%' })),
    el('span', { text: fmtRes(key, used) + '/' + fmtRes(key, total) }));
}

function tile(n) {
  const t = el('div', { class: 'tile' + (n.unschedulable ? ' unsched' : ''), 'data-node': n.name });
  t.append(el('div', { class: 'name', title: n.name, text: n.name }));
  t.append(el('div', { class: 'meta', text: (n.zone ? 'zone ' + n.zone + ' · ' : '') + n.nPods + (n.nPods === 1 ? ' pod' : ' pods') + (n.unschedulable ? ' · cordoned' : '') }));
  t.append(bar('cpu', n.requested.cpu, n.allocatable.cpu, 'cpu'));
  t.append(bar('mem', n.requested.memory, n.allocatable.memory, 'memory'));
  t.append(bar('pods', n.requested.pods, n.allocatable.pods, 'pods'));
  for (const k of Object.keys(n.allocatable)) {
    if (['cpu', 'memory', 'pods', 'ephemeralStorage'].includes(k)) continue;
    t.append(bar(k.split('/').pop().slice(0, 5), n.requested[k] || 0, n.allocatable[k], k));
  }
  if (n.taints.length) {
    const d = el('div');
    for (const x of n.taints) d.append(el('span', { class: 'taint', text: x.key + (x.value ? '=' + x.value : '') + ':' + x.effect }));
    t.append(d);
  }
  if (n.pods && n.pods.length) t.append(el('div', { class: 'pods', text: n.pods.join(', ') + (n.nPods > n.pods.length ? ', ...' : '') }));
  t.addEventListener('click', () => nodeDetail(n));
  return t;
}

// A node's details (a click on its tile): labels, taints and its pods,
// each a link to the Pod view.
function nodeDetail(n) {
  const box = $('cluster-detail');
  clear(box);
  box.hidden = false;
  box.append(el('h4', { text: n.name + (n.zone ? ' (zone ' + n.zone + ')' : '') }),
    el('button', { type: 'button', onclick: () => { box.hidden = true; }, text: 'Close' }));
  box.append(el('p', { text: 'labels: ' + Object.entries(n.labels || {}).map(([k, v]) => k + '=' + v).join(', ') }));
  if (n.taints.length) box.append(el('p', { text: 'taints: ' + n.taints.map((x) => x.key + '=' + x.value + ':' + x.effect).join(', ') }));
  const p = el('p', {}, n.nPods + (n.nPods === 1 ? ' pod' : ' pods') + (n.pods && n.pods.length ? ': ' : ''));
  (n.pods || []).forEach((k, i) => { if (i) p.append(', '); p.append(el('a', { href: '#pod/' + k, text: k })); });
  box.append(p);
}

// Render in slices of a few hundred tiles per frame: 5,000 nodes never
// block the page, and a newer render (typing in the filter) stops an
// older one.
function renderNodes() {
  const seq = ++state.renderSeq;
  const box = $('cluster-groups');
  clear(box);
  const f = $('cluster-filter').value.trim().toLowerCase();
  const g = $('cluster-group').value;
  const shown = f ? state.nodes.filter((n) => nodeText(n).includes(f)) : state.nodes;
  const groups = new Map();
  for (const n of shown) {
    const key = g === '' ? '' : g === '@zone' ? (n.zone || '(no zone)') : ((n.labels || {})[g] || '(no ' + g + ')');
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(n);
  }
  const natural = (a, b) => a.localeCompare(b, undefined, { numeric: true });
  const keys = [...groups.keys()].sort(natural);
  for (const ns of groups.values()) ns.sort((a, b) => natural(a.name, b.name));
  $('cluster-summary').textContent = shown.length + ' of ' + state.nodes.length + ' nodes' + (g ? ' in ' + keys.length + ' groups' : '');
  const work = [];
  for (const k of keys) {
    const ns = groups.get(k);
    const tiles = el('div', { class: 'tiles' });
    const sec = el('div', { class: 'group' });
    if (g) sec.append(el('h4', { text: k + ' (' + ns.length + ')' }));
    sec.append(tiles);
    box.append(sec);
    for (const n of ns) work.push([tiles, n]);
  }
  // Each slice goes in through a fragment per group: one layout per
  // frame, and off-screen tiles are not laid out at all (CSS
  // content-visibility).
  let i = 0;
  function slice() {
    if (seq !== state.renderSeq) return;
    const end = Math.min(work.length, i + 250);
    let box = null, frag = null;
    for (; i < end; i++) {
      if (work[i][0] !== box) {
        if (frag) box.append(frag);
        box = work[i][0];
        frag = document.createDocumentFragment();
      }
      frag.append(tile(work[i][1]));
    }
    if (frag) box.append(frag);
    if (i < work.length) requestAnimationFrame(slice);
  }
  slice();
}

function fillGroupKeys() {
  const sel = $('cluster-group');
  const keep = sel.value;
  const keys = new Set();
  for (const n of state.nodes) for (const k of Object.keys(n.labels || {})) keys.add(k);
  while (sel.options.length > 2) sel.remove(2);
  for (const k of [...keys].sort()) sel.append(el('option', { value: k, text: k }));
  sel.value = keep;
}

async function showCluster() {
  state.nodes = await loadNodes();
  fillGroupKeys();
  renderNodes();
  setStatus('');
}

// --- Queue -------------------------------------------------------------------

async function showQueue() {
  const q = await api('/debug/queue?limit=1000');
  const c = q.counts;
  $('queue-summary').textContent = c.active + ' active, ' + c.backoff + ' backing off, ' + c.unschedulable +
    ' unschedulable, ' + c.gated + ' gated, ' + c.inFlight + ' in flight' + (q.continue ? ' (first 1000 shown)' : '');
  const tb = $('queue-table').tBodies[0];
  clear(tb);
  for (const p of q.items) {
    const key = p.namespace + '/' + p.name;
    const rej = el('td');
    const evs = el('td');
    for (const r of p.rejectedBy) {
      rej.append(el('span', { class: 'badge ' + r.status, title: r.status, text: r.name }));
      evs.append(el('div', {}, el('b', { text: r.name + ': ' }),
        r.events.map((e) => e.event + (e.hint ? ' (hint)' : '')).join(', ')));
    }
    tb.append(el('tr', { 'data-pod': key },
      el('td', {}, el('a', { href: '#pod/' + key, text: key })),
      el('td', {}, el('span', { class: 'badge ' + p.queue, text: p.queue })),
      el('td', { text: p.attempts }),
      el('td', { class: 'fiterror', text: p.message || '' }),
      rej, evs,
      el('td', { text: p.nominatedNode || '' }),
      el('td', {}, el('button', { type: 'button', onclick: () => { location.hash = '#pod/' + key + '/explain'; }, text: 'Explain' }))));
  }
  setStatus('');
}

// --- Pod ---------------------------------------------------------------------

async function showPod(args) {
  if (args.length >= 2) { $('pod-ns').value = args[0]; $('pod-name').value = args[1]; }
  const ns = $('pod-ns').value.trim(), name = $('pod-name').value.trim();
  clear($('pod-info'));
  clear($('attempts-table').tBodies[0]);
  if (!name) { $('pod-summary').textContent = 'choose a pod (or open one from the Queue)'; return; }
  let p;
  try {
    p = await api('/debug/pods/' + encodeURIComponent(ns) + '/' + encodeURIComponent(name));
  } catch (e) {
    $('pod-summary').textContent = e.message;
    return;
  }
  $('pod-summary').textContent = p.state + (p.node ? ' on ' + p.node : '') + ' · ' + p.attemptsTotal + (p.attemptsTotal === 1 ? ' attempt' : ' attempts');
  const info = $('pod-info');
  if (p.queue) {
    info.append(el('p', {}, 'In the ', el('b', { text: p.queue.queue }), ' queue. ',
      p.queue.message ? 'Last FitError: ' : '', p.queue.message ? el('span', { class: 'fiterror', text: p.queue.message }) : null));
    for (const r of p.queue.rejectedBy)
      info.append(el('p', {}, el('span', { class: 'badge ' + r.status, text: r.name }),
        ' rejected it; it is tried again on: ' + r.events.map((e) => e.event + (e.hint ? ' (if its QueueingHint says Queue)' : '')).join(', ')));
  }
  // why the pod went to its node: the scores of its last cycle
  const chose = p.attempts.find((a) => a.score);
  if (chose) {
    const parts = chose.score.plugins.filter((x) => x.score !== null).map((x) => (x.name || 'plugin') + ' ' + x.score);
    info.append(el('p', { class: 'why' }, 'Its cycle at ' + fmtTime(chose.time) + ' chose ', el('b', { text: chose.node }),
      ': total ' + chose.score.total + (chose.score.runnerUp === undefined ? ' (the only feasible node)' : chose.score.runnerUp === chose.score.total
        ? ' (a tie with the best other node, broken at random)' : ' (the best other node: ' + chose.score.runnerUp + ')') +
      ' = ' + parts.join(' + ') + ', among ' + chose.feasible + ' feasible of ' + chose.nodes + ' nodes.'));
  }
  const tb = $('attempts-table').tBodies[0];
  for (const a of p.attempts) {
    const ep = a.extensionPoints;
    tb.append(el('tr', {},
      el('td', { text: fmtTime(a.time) }),
      el('td', {}, el('span', { class: 'badge ' + a.result, text: a.result })),
      el('td', { text: a.node || a.nominatedNode ? (a.node || 'nominated ' + a.nominatedNode) : '' }),
      el('td', { text: fmtSec(a.seconds) }),
      ...['PreFilter', 'Filter', 'PostFilter', 'PreScore', 'Score'].map((k) => el('td', { text: fmtSec(ep[k]) })),
      el('td', { text: a.bindSeconds ? fmtSec(a.bindSeconds) : '' }),
      el('td', { text: a.nodes + ' / ' + a.feasible }),
      el('td', { title: a.score ? a.score.plugins.map((x) => (x.name || '?') + ': ' + (x.score === null ? 'skipped' : x.score)).join('\n') : null,
        text: a.score ? a.score.total + (a.score.runnerUp !== undefined ? ' (next ' + a.score.runnerUp + ')' : '') : '' }),
      el('td', { text: a.generation }),
      el('td', { text: a.message })));
  }
  if (args[2] === 'explain') runExplain();
}

async function runExplain() {
  const ns = $('pod-ns').value.trim(), name = $('pod-name').value.trim();
  if (!name) return;
  $('explain-summary').textContent = 'running a what-if cycle...';
  let x;
  try {
    x = await api('/debug/explain/' + encodeURIComponent(ns) + '/' + encodeURIComponent(name), { method: 'POST' });
  } catch (e) {
    $('explain-summary').textContent = e.message;
    return;
  }
  state.explain = x;
  state.sort = null;
  const s = (x.boundNode ? 'is bound to ' + x.boundNode + ' (marked ●); as a new pod now it ' : '') +
    (x.selected ? 'would go to ' + x.selected + ' (marked ★)' : 'fits no node: ' + (x.message || ''));
  $('explain-summary').textContent = x.namespace + '/' + x.name + ' ' + s + ' · ' + x.feasible + ' of ' +
    x.nodesTotal + ' nodes pass the filters · profile ' + x.profile + ', generation ' + x.generation + ' · ' + fmtSec(x.seconds) +
    (x.boundNode ? ' · its own requests still count on ' + x.boundNode : '');
  renderExplain();
}

// Columns: node, verdict, rejected by, reason, each Filter plugin, each
// Score plugin (weighted; the title has the normalized score), total.
function explainColumns(x) {
  // the verdict and who rejected the node, then the scores (when a node
  // passed), then every Filter plugin's verdict
  const cols = [
    { name: 'Node', get: (n) => n.name },
    { name: 'Verdict', get: (n) => (n.feasible ? 'passes' : 'rejected') },
    { name: 'Rejected by', get: (n) => n.rejectedBy || '' },
    { name: 'Reason', get: (n) => n.reason || '' },
  ];
  if (x.feasible > 0) {
    cols.push({ name: 'Total', get: (n) => (n.total === undefined ? null : n.total) });
    x.scorePlugins.forEach((p, i) => cols.push({ name: p.name + ' ×' + p.weight, score: i, weight: p.weight,
      get: (n) => (n.scores ? n.scores[i] : null) }));
  }
  // a Filter plugin's verdict: '' passed, the reason where it rejected
  // the node, null when it did not run (after the rejection)
  const verdict = (n, i) => (n.feasible || i < n.rejectedAt ? '' : i === n.rejectedAt ? n.reason : null);
  x.filterPlugins.forEach((p, i) => cols.push({ name: p, filter: i, get: (n) => verdict(n, i) }));
  if (x.nodes.some((n) => n.extenders)) cols.push({ name: 'Extenders', get: (n) => (n.extenders || []).map((e) => e.extender + ': ' + e.filter + (e.reason ? ' (' + e.reason + ')' : '') + (e.score !== undefined ? ' +' + e.score : '')).join('; ') });
  return cols;
}

function cmp(a, b) {
  if (a === b) return 0;
  if (a === null || a === undefined) return 1;
  if (b === null || b === undefined) return -1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return String(a).localeCompare(String(b), undefined, { numeric: true });
}

function renderExplain() {
  const x = state.explain;
  if (!x) return;
  const cols = explainColumns(x);
  const tbl = $('explain-table');
  clear(tbl.tHead);
  clear(tbl.tBodies[0]);
  const hr = el('tr');
  cols.forEach((c, i) => {
    const th = el('th', { text: c.name, 'data-col': i, title: c.score !== undefined ? 'weighted score (normalized × weight)' : 'sort' });
    if (state.sort && state.sort.col === i) th.classList.add(state.sort.dir > 0 ? 'sorted-asc' : 'sorted-desc');
    th.addEventListener('click', () => {
      state.sort = { col: i, dir: state.sort && state.sort.col === i ? -state.sort.dir : 1 };
      renderExplain();
    });
    hr.append(th);
  });
  tbl.tHead.append(hr);
  let rows = x.nodes.slice();
  if (state.sort) {
    const c = cols[state.sort.col];
    rows.sort((a, b) => state.sort.dir * cmp(c.get(a), c.get(b)) || cmp(a.name, b.name));
  } else {
    // chosen first, then feasible by total, then rejected by name
    rows.sort((a, b) => (b.name === x.selected) - (a.name === x.selected) || (b.feasible - a.feasible) ||
      cmp(b.total, a.total) || cmp(a.name, b.name));
  }
  const seq = ++state.renderSeq;
  const tb = tbl.tBodies[0];
  let i = 0;
  function slice() {
    if (seq !== state.renderSeq) return;
    const end = Math.min(rows.length, i + 200);
    for (; i < end; i++) {
      const n = rows[i];
      const cls = [n.name === x.selected ? 'chosen' : '', n.name === x.boundNode ? 'bound' : ''].join(' ').trim();
      const tr = el('tr', { 'data-node': n.name, class: cls || null });
      for (const c of cols) {
        const v = c.get(n);
        if (c.filter !== undefined) {
          if (v === null) tr.append(el('td', { class: 'notrun', title: 'not run', text: '–' }));
          else if (v === '') tr.append(el('td', { class: 'pass', text: '✓' }));
          else tr.append(el('td', { class: 'fail', title: v, text: '✗ ' + v }));
        } else if (c.score !== undefined) {
          tr.append(el('td', { title: v === null ? 'skipped' : 'normalized ' + (v / c.weight) + ' × weight ' + c.weight, text: v === null ? (n.feasible ? 'skip' : '') : v }));
        } else {
          tr.append(el('td', { class: c.name === 'Rejected by' && v ? 'fail rejecter' : c.name === 'Reason' ? 'reason' : null, text: v === null ? '' : v }));
        }
      }
      tb.append(tr);
    }
    if (i < rows.length) requestAnimationFrame(slice);
  }
  slice();
}

// --- Plugins -----------------------------------------------------------------

async function showPlugins() {
  const d = await api('/debug/plugins');
  $('plugins-summary').textContent = 'generation ' + d.generation + ' · ' + d.plugins.length + ' plugins · ' + d.liveImages + ' images mapped';
  const deadline = {};
  for (const p of d.profiles || []) for (const [k, v] of Object.entries(p.deadlineMs)) deadline[k] = v;
  const tb = $('plugins-table').tBodies[0];
  clear(tb);
  for (const p of d.plugins)
    tb.append(el('tr', { 'data-plugin': p.name },
      el('td', { text: p.name }), el('td', { class: 'version', text: p.version }), el('td', {}, el('code', { text: p.hash })),
      el('td', { title: p.copyPath, text: p.file }),
      el('td', { text: deadline[p.name] ? deadline[p.name] + ' ms' : 'none' }),
      el('td', { class: p.quarantined || p.rolledBack ? 'fail' : null, text: (p.quarantined ? 'yes' : 'no') + (p.rolledBack ? ' · rolled back to a known-good copy' : '') }),
      el('td', { text: p.refs })));
  const prof = $('plugins-profiles');
  clear(prof);
  for (const p of d.profiles || []) {
    const t = el('table', { class: 'grid' }, el('thead', {}, el('tr', {}, el('th', { text: 'Extension point' }), el('th', { text: 'Plugins (in order; Score with weights)' }))));
    const b = el('tbody');
    for (const [ep, list] of Object.entries(p.extensionPoints))
      b.append(el('tr', {}, el('td', { text: ep }), el('td', { text: list.map((x) => x.name + (x.weight ? ' ×' + x.weight : '')).join(', ') })));
    t.append(b);
    prof.append(el('h4', { text: 'profile ' + p.name }), t);
  }
  const rb = $('reloads-table').tBodies[0];
  clear(rb);
  const hist = d.history || [];
  const rows = [];
  for (const h of hist) if (h.trigger === 'start') rows.push({ time: h.time, trigger: 'start', result: 'success', generation: h.generation, what: h.plugins.length + ' plugins loaded' });
  for (const r of d.reloads || []) {
    let what = r.error || '';
    if (r.changes) what = r.changes.length ? r.changes.map((c) => c.change === 'replaced'
      ? c.plugin + ' ' + c.fromVersion + ' → ' + c.toVersion + (c.fromVersion === c.toVersion ? ' (content ' + c.fromHash.slice(0, 8) + ' → ' + c.toHash.slice(0, 8) + ')' : '')
      : c.plugin + ' ' + c.change + ' (' + c.version + ')').join('; ') : 'no plugin changed (configuration only)';
    rows.push({ time: r.time, trigger: r.trigger, result: r.result, generation: r.result === 'failure' ? 'kept ' + r.previous : r.generation, what });
  }
  rows.sort((a, b) => b.time - a.time);
  for (const r of rows)
    rb.append(el('tr', {}, el('td', { text: fmtTime(r.time) }), el('td', { text: r.trigger }),
      el('td', {}, el('span', { class: 'badge ' + r.result, text: r.result })), el('td', { class: 'generation', text: r.generation }),
      el('td', { text: r.what })));
  const f = $('plugins-faults');
  clear(f);
  const fl = d.faults || {};
  f.append(el('p', { text: (fl.supervised ? 'Under the supervisor: ' + fl.workerStarts + ' worker starts. ' : 'No supervisor. ') +
    (fl.generationPassedProbation ? 'This generation passed its probation.' : 'This generation is on probation.') }));
  if ((fl.faults || []).length) {
    const t = el('table', { class: 'grid' }, el('thead', {}, el('tr', {}, ...['Time', 'Plugin', 'Version', 'Kind', 'Extension point', 'Pod', 'Message'].map((h) => el('th', { text: h })))));
    const b = el('tbody');
    for (const x of fl.faults) b.append(el('tr', {}, ...[fmtTime(x.time), x.plugin, x.version, x.kind + (x.signal ? ' ' + x.signal : ''), x.extensionPoint, x.pod, x.message].map((v) => el('td', { text: v }))));
    t.append(b);
    f.append(el('h4', { text: 'Faults (the faulty version is quarantined)' }), t);
  } else f.append(el('p', { text: 'No plugin fault.' }));
  const lists = [['knownGood', 'Known-good versions (what a fault rolls back to)'], ['swappedOut', 'Versions swapped out by reloads']];
  for (const [k, title] of lists) {
    if (!(fl[k] || []).length) continue;
    f.append(el('h4', { text: title }));
    f.append(el('ul', {}, ...fl[k].map((g) => el('li', { text: g.name + ' ' + g.version + ' (generation ' + g.generation + ')' + (g.quarantined ? ' — quarantined' : '') }))));
  }
  if (d.lastReload && d.lastReload.result === 'failure')
    f.append(el('p', { class: 'error', text: 'Last reload failed (' + d.lastReload.trigger + '): ' + d.lastReload.error }));
  setStatus('generation ' + d.generation);
}

// --- Shadow --------------------------------------------------------------------

async function showShadow() {
  const box = $('shadow-body');
  clear(box);
  let d;
  try {
    d = await api('/debug/shadow');
  } catch (e) {
    if (e.status === 404) { box.append(el('p', { text: 'Shadow mode is not running: ' + e.message })); return; }
    throw e;
  }
  box.append(el('p', { text: 'Comparing ' + d.names.map((n) => n.schedulerName + ' with profile ' + n.profile).join(', ') + ' · generation ' + d.generation }));
  const classes = ['same', 'tied', 'different', 'unschedulable', 'placed', 'error'];
  const t = el('table', { class: 'grid' }, el('thead', {}, el('tr', {}, el('th', { text: 'Profile' }), el('th', { text: 'Generation' }), ...classes.map((c) => el('th', { text: c })), el('th', { text: 'Agreement' }))));
  const b = el('tbody');
  for (const p of d.periods) {
    const tot = classes.reduce((s, c) => s + (p.decisions[c] || 0), 0);
    const agree = (p.decisions.same || 0) + (p.decisions.tied || 0);
    b.append(el('tr', {}, el('td', { text: p.profile }), el('td', { text: p.generation }), ...classes.map((c) => el('td', { text: p.decisions[c] || 0 })),
      el('td', { text: tot ? (100 * agree / tot).toFixed(1) + '%' : '' })));
  }
  t.append(b);
  box.append(t);
  box.append(el('h3', { text: 'Latest differences' }));
  for (const x of d.differences.slice().reverse()) {
    box.append(el('h4', { text: x.namespace + '/' + x.name + ': ' + x.result + ' — ' + x.reason }));
    box.append(el('div', { class: 'side' },
      el('div', {}, el('b', { text: 'the other scheduler: ' + (x.realNode || '-') }), el('pre', { text: x.explainReal })),
      el('div', {}, el('b', { text: 'ksched: ' + (x.kschedNode || '-') }), el('pre', { text: x.explainKsched }))));
  }
}

// --- Rates ---------------------------------------------------------------------

const COLORS = ['#2457c5', '#c0392b', '#2e8b57', '#c77c02', '#7d3c98'];

function chart(title, series, unit) {
  const W = 760, H = 180, L = 56, B = 22;
  const all = series.flatMap((s) => s.points.map((p) => p[1]));
  const xs = series.flatMap((s) => s.points.map((p) => p[0]));
  const x0 = Math.min(...xs), x1 = Math.max(...xs);
  const ymax = Math.max(1e-9, ...all);
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', '0 0 ' + W + ' ' + H);
  svg.setAttribute('width', W);
  svg.setAttribute('height', H);
  const sx = (x) => L + ((x - x0) / Math.max(1, x1 - x0)) * (W - L - 8);
  const sy = (y) => H - B - (y / ymax) * (H - B - 8);
  const line = (x1_, y1_, x2_, y2_) => { const l = document.createElementNS(ns, 'line'); l.setAttribute('x1', x1_); l.setAttribute('y1', y1_); l.setAttribute('x2', x2_); l.setAttribute('y2', y2_); l.setAttribute('stroke', '#d9dde5'); svg.append(l); };
  const text = (x, y, s, anchor) => { const t = document.createElementNS(ns, 'text'); t.setAttribute('x', x); t.setAttribute('y', y); if (anchor) t.setAttribute('text-anchor', anchor); t.textContent = s; svg.append(t); };
  for (let k = 0; k <= 4; k++) {
    const y = (ymax * k) / 4;
    line(L, sy(y), W - 8, sy(y));
    text(L - 4, sy(y) + 4, unit === 's' ? fmtSec(y) : (y >= 10 ? y.toFixed(0) : y >= 1 ? y.toFixed(1) : y.toFixed(2)), 'end');
  }
  if (xs.length) {
    text(L, H - 6, fmtTime(x0));
    text(W - 8, H - 6, fmtTime(x1), 'end');
  }
  series.forEach((s, i) => {
    if (!s.points.length) return;
    const p = document.createElementNS(ns, 'polyline');
    p.setAttribute('fill', 'none');
    p.setAttribute('stroke', COLORS[i % COLORS.length]);
    p.setAttribute('stroke-width', '1.6');
    p.setAttribute('points', s.points.map((q) => sx(q[0]).toFixed(1) + ',' + sy(q[1]).toFixed(1)).join(' '));
    p.setAttribute('data-series', s.name);
    svg.append(p);
  });
  const legend = el('div', { class: 'legend' }, ...series.map((s, i) => el('span', {}, el('i', { style: 'background:' + COLORS[i % COLORS.length] }), s.name + (s.points.length ? ': ' + (unit === 's' ? fmtSec(s.points[s.points.length - 1][1]) : s.points[s.points.length - 1][1].toFixed(unit === '/s' ? 1 : 0)) : ''))));
  return el('div', { class: 'chart' }, el('h4', { text: title }), svg, legend);
}

async function showRates() {
  const d = await api('/debug/rates?seconds=600');
  const c = d.columns;
  const col = (name) => c.indexOf(name);
  const S = d.samples;
  const rate = (name) => S.slice(1).map((s, i) => [s[0], Math.max(0, s[col(name)] - S[i][col(name)]) / Math.max(1e-3, s[0] - S[i][0])]);
  const val = (name) => S.map((s) => [s[0], s[col(name)]]);
  const box = $('rates-charts');
  clear(box);
  box.append(chart('Pods per second', [{ name: 'scheduled', points: rate('scheduled') }, { name: 'bound', points: rate('bound') },
    { name: 'unschedulable attempts', points: rate('unschedulable') }, { name: 'errors', points: rate('errors') }], '/s'));
  box.append(chart('Attempt latency (last ' + d.latencyWindowSeconds + ' s)', [{ name: 'p50', points: val('p50') }, { name: 'p90', points: val('p90') }, { name: 'p99', points: val('p99') }], 's'));
  box.append(chart('Queue sizes', [{ name: 'active', points: val('active') }, { name: 'backoff', points: val('backoff') },
    { name: 'unschedulable', points: val('unschedulablePool') }, { name: 'in flight', points: val('inFlight') }], ''));
  const last = S[S.length - 1];
  $('rates-summary').textContent = S.length ? S.length + ' samples, one a second · ' + last[col('scheduled')] + ' scheduled, ' + last[col('attempts')] + ' attempts so far' : 'no sample yet (one a second)';
}

// --- start -------------------------------------------------------------------

function start() {
  $('token-form').addEventListener('submit', tokenGiven);
  let t = null;
  $('cluster-filter').addEventListener('input', () => { clearTimeout(t); t = setTimeout(renderNodes, 120); });
  $('cluster-group').addEventListener('change', renderNodes);
  $('cluster-refresh').addEventListener('click', () => showCluster().catch((e) => setStatus(e.message)));
  $('queue-refresh').addEventListener('click', () => showQueue().catch((e) => setStatus(e.message)));
  $('plugins-refresh').addEventListener('click', () => showPlugins().catch((e) => setStatus(e.message)));
  $('shadow-refresh').addEventListener('click', () => showShadow().catch((e) => setStatus(e.message)));
  $('pod-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    location.hash = '#pod/' + $('pod-ns').value.trim() + '/' + $('pod-name').value.trim();
  });
  $('explain-run').addEventListener('click', runExplain);
  window.addEventListener('hashchange', route);
  route();
}
start();
