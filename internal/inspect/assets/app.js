// Parley inspector: the page. It talks only to the inspector's own server
// (the /api/ calls), which calls the agent and records the traffic.
'use strict';

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.hash.slice(1));
// The URL parley inspect opened carries a one-time code, traded below for
// an HttpOnly session cookie; the page never sees a lasting secret.
const code = params.get('code') || '';
const ui = { calls: [], pushSeq: 0, pushURL: '', task: null, artifacts: new Map(), pages: [''], page: 0 };

// el builds an element; strings become text nodes (never HTML).
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === 'class') e.className = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const c of children.flat()) {
    if (c !== null && c !== undefined) e.append(c instanceof Node ? c : String(c));
  }
  return e;
}

function setStatus(text, error) {
  $('status').textContent = text;
  $('status').className = error ? 'error' : '';
}

function showTab(name) {
  for (const b of document.querySelectorAll('#tabs button')) b.classList.toggle('active', b.dataset.tab === name);
  for (const s of document.querySelectorAll('main .tab')) s.hidden = s.id !== 'tab-' + name;
}

function shortState(s) { return (s || '').replace('TASK_STATE_', ''); }

function pretty(text) {
  try { return JSON.stringify(JSON.parse(text), null, 2); } catch { return text; }
}

// conn is how the agent is to be called, as every API call sends it.
function conn() {
  const headers = {};
  for (const line of $('headers').value.split('\n')) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  return { url: $('url').value.trim(), binding: $('binding').value, token: $('token').value, headers };
}

async function api(path, body) {
  const init = { headers: { 'X-Parley-Inspect': 'session' } };
  if (body !== undefined) {
    init.method = 'POST';
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const resp = await fetch(path, init);
  if (resp.status === 403) throw new Error('the inspector refused the call: open the URL parley inspect printed (its code works once; run parley inspect again for a new one)');
  return resp;
}

// call performs one A2A operation through the inspector and hands each
// JSON line of the answer (interface, result, event, error, traffic) to
// onLine. It returns the error line, if any.
async function call(method, request, onLine) {
  const resp = await api('/api/call', { ...conn(), method, request });
  const reader = resp.body.getReader();
  const decoder = new TextDecoder();
  const record = { method, at: new Date().toLocaleTimeString(), traffic: [] };
  ui.calls.unshift(record);
  let buf = '', error = null;
  for (;;) {
    const { value, done } = await reader.read();
    if (value) buf += decoder.decode(value, { stream: true });
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = JSON.parse(buf.slice(0, i));
      buf = buf.slice(i + 1);
      if (line.traffic) { record.traffic = line.traffic; renderTraffic(); }
      if (line.error) error = line.error;
      if (onLine) onLine(line);
    }
    if (done) break;
  }
  return error;
}

function errorText(e) { return e.code + ': ' + e.message; }

// ---- the card ----

async function loadCard(ev) {
  if (ev) ev.preventDefault();
  setStatus('Loading the card…');
  const resp = await api('/api/card', conn());
  const out = await resp.json();
  ui.calls.unshift({ method: 'agent card', at: new Date().toLocaleTimeString(), traffic: out.traffic || [] });
  renderTraffic();
  if (out.error) { setStatus('The card could not be loaded: ' + errorText(out.error), true); return; }
  renderChecks($('card-checks'), $('card-counts'), out.report);
  $('card-empty').hidden = true;
  $('card-view').hidden = false;
  if (!out.card) {
    $('card-name').textContent = 'The card could not be read';
    setStatus('The card failed a check that stops the others: see below.', true);
    return;
  }
  renderCard(out.card);
  setStatus('Loaded the card of ' + out.card.name + '.');
  history.replaceState(null, '', '#' + new URLSearchParams({ url: conn().url }).toString());
}

function renderChecks(list, counts, report) {
  list.replaceChildren();
  const c = report.counts;
  counts.textContent = `${c.passed} passed, ${c.mustFailed} MUST failed, ${c.shouldNotMet} SHOULD not met, ${c.notApplicable} not applicable, ${c.skipped} skipped`;
  for (const r of report.results) {
    list.append(el('li', { 'data-id': r.id },
      el('span', { class: 'verdict ' + r.verdict.replace('/', '') }, r.verdict), el('code', {}, r.id), r.binding ? ' [' + r.binding + ']' : '', ' ', r.title,
      r.finding ? el('div', { class: 'detail' }, r.finding) : null));
  }
}

function renderCard(card) {
  $('card-name').textContent = card.name + (card.version ? ' ' + card.version : '');
  $('card-description').textContent = card.description || '';
  const tbody = $('card-interfaces').tBodies[0];
  tbody.replaceChildren(...(card.supportedInterfaces || []).map((i) =>
    el('tr', {}, el('td', {}, i.protocolBinding), el('td', {}, i.url), el('td', {}, i.protocolVersion || ''))));
  const caps = card.capabilities || {};
  const facts = [
    ['streaming', String(!!caps.streaming)], ['push notifications', String(!!caps.pushNotifications)],
    ['extended card', String(!!caps.extendedAgentCard)],
    ['input modes', (card.defaultInputModes || []).join(', ')], ['output modes', (card.defaultOutputModes || []).join(', ')],
    ['provider', card.provider ? card.provider.organization + ' ' + (card.provider.url || '') : ''],
    ['security', card.securitySchemes ? Object.keys(card.securitySchemes).join(', ') : 'none declared'],
  ];
  $('card-facts').replaceChildren(...facts.flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]));
  $('card-skills').replaceChildren(...(card.skills || []).map((s) => el('li', {},
    el('strong', {}, s.name), ' ', el('code', {}, s.id), el('div', { class: 'detail' }, s.description || ''),
    (s.tags || []).length ? el('div', { class: 'detail' }, 'tags: ' + s.tags.join(', ')) : null,
    el('div', {}, ...(s.examples || []).map((x) => el('button', { type: 'button', class: 'secondary example', onclick: () => { $('text').value = x; showTab('send'); } }, x))))));
  $('card-json').textContent = JSON.stringify(card, null, 2);
}

// ---- sending and the timeline ----

function newID() { return crypto.randomUUID ? crypto.randomUUID() : String(Date.now()) + Math.random().toString(16).slice(2); }

function readFile(f) {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve(String(r.result).replace(/^data:[^,]*,/, ''));
    r.onerror = () => reject(r.error);
    r.readAsDataURL(f);
  });
}

async function buildMessage() {
  const parts = [];
  if ($('text').value) parts.push({ text: $('text').value });
  for (const f of $('files').files) parts.push({ raw: await readFile(f), filename: f.name, mediaType: f.type || 'application/octet-stream' });
  if ($('data').value.trim()) parts.push({ data: JSON.parse($('data').value) });
  const m = { messageId: newID(), role: 'ROLE_USER', parts };
  if ($('task-id').value.trim()) m.taskId = $('task-id').value.trim();
  if ($('context-id').value.trim()) m.contextId = $('context-id').value.trim();
  return m;
}

async function send(ev) {
  ev.preventDefault();
  let message;
  try { message = await buildMessage(); } catch (e) { setStatus('The data is not JSON: ' + e.message, true); return; }
  if (!message.parts.length) { setStatus('The message is empty: type some text, pick a file or give data.', true); return; }
  const mode = $('mode').value;
  const request = { message, configuration: {} };
  if (mode === 'async') request.configuration.returnImmediately = true;
  if ($('use-push').checked) request.configuration.taskPushNotificationConfig = { url: ui.pushURL, token: 'parley-inspect' };
  resetTimeline();
  addEntry('sent', 'message', (message.parts.find((p) => p.text) || {}).text || `${message.parts.length} part(s)`);
  $('send').disabled = true;
  setStatus('Sending…');
  try {
    const err = await call(mode === 'stream' ? 'SendStreamingMessage' : 'SendMessage', request, onAnswer);
    setStatus(err ? 'The agent answered with an error: ' + errorText(err) : 'Done.', !!err);
  } catch (e) {
    setStatus(e.message, true);
  } finally {
    $('send').disabled = false;
  }
}

// onAnswer handles one line of a send or subscribe answer.
function onAnswer(line) {
  if (line.interface) addEntry('via', line.interface.protocolBinding, line.interface.url);
  if (line.error) addEntry('error', line.error.code, line.error.message, 'error');
  if (line.result) {
    const r = line.result;
    if (r.task) showTask(r.task, 'task');
    else if (r.message) addEntry('message', 'reply', partsText(r.message.parts));
    else if (r.id) showTask(r, 'task');
  }
  if (line.event) onEvent(line.event);
}

function onEvent(e) {
  if (e.task) showTask(e.task, 'task');
  else if (e.message) addEntry('message', 'reply', partsText(e.message.parts));
  else if (e.statusUpdate) {
    const st = e.statusUpdate.status || {};
    setTask(e.statusUpdate.taskId, e.statusUpdate.contextId, st.state);
    addEntry('status', shortState(st.state), st.message ? partsText(st.message.parts) : '', shortState(st.state));
  } else if (e.artifactUpdate) {
    const u = e.artifactUpdate;
    setTask(u.taskId, u.contextId);
    applyChunk(u.artifact, !!u.append, !!u.lastChunk);
    addEntry('artifact', u.artifact.artifactId + (u.append ? ' +' : '') + (u.lastChunk ? ' (last)' : ''), partsText(u.artifact.parts));
  }
}

function showTask(t, kind) {
  setTask(t.id, t.contextId, (t.status || {}).state);
  const st = t.status || {};
  addEntry(kind, shortState(st.state), st.message ? partsText(st.message.parts) : '', shortState(st.state));
  for (const a of t.artifacts || []) applyChunk(a, false, true);
}

function setTask(id, contextId, state) {
  if (!id) return;
  ui.task = { id, contextId, state: state || (ui.task && ui.task.id === id ? ui.task.state : '') };
  $('timeline-task').textContent = id;
  $('task-actions').hidden = false;
  const s = shortState(ui.task.state);
  $('task-state').textContent = s;
  $('task-state').className = 'state ' + s;
}

function resetTimeline() {
  $('timeline').replaceChildren();
  ui.artifacts = new Map();
  renderArtifacts();
}

function addEntry(kind, what, detail, stateClass) {
  $('timeline').append(el('li', { 'data-kind': kind },
    el('span', { class: 'time' }, new Date().toLocaleTimeString()),
    el('span', { class: 'state ' + (stateClass || '') }, stateClass ? what : ''),
    el('strong', {}, kind), ' ', stateClass ? '' : what,
    detail ? el('div', { class: 'detail' }, detail) : null));
}

function partsText(parts) {
  return (parts || []).map((p) => p.text !== undefined ? p.text
    : p.data !== undefined ? JSON.stringify(p.data)
    : p.raw !== undefined ? `[file ${p.filename || ''} ${p.mediaType || ''}]`
    : p.url !== undefined ? `[file at ${p.url}]` : '').join('');
}

// applyChunk reassembles artifacts the way the specification appends
// chunks: an append adds parts, anything else replaces the artifact.
function applyChunk(a, append, last) {
  const cur = ui.artifacts.get(a.artifactId);
  if (append && cur) {
    cur.artifact.parts.push(...(a.parts || []));
    if (a.name) cur.artifact.name = a.name;
    cur.done = last;
  } else {
    ui.artifacts.set(a.artifactId, { artifact: structuredClone(a), done: last });
  }
  renderArtifacts();
}

function renderArtifacts() {
  const box = $('artifacts');
  box.replaceChildren();
  for (const [id, { artifact, done }] of ui.artifacts) {
    box.append(el('div', { class: 'artifact', 'data-artifact': id },
      el('strong', {}, artifact.name || id), ' ', el('code', {}, id), ' ', el('span', { class: 'done' }, done ? 'complete' : 'receiving…'),
      ...mergeText(artifact.parts || []).map(renderPart)));
  }
}

// mergeText joins consecutive text parts, as streamed chunks read.
function mergeText(parts) {
  const out = [];
  for (const p of parts) {
    const prev = out[out.length - 1];
    if (p.text !== undefined && prev && prev.text !== undefined) prev.text += p.text;
    else out.push({ ...p });
  }
  return out;
}

function renderPart(p) {
  if (p.text !== undefined) return el('pre', { class: 'part-text' }, p.text);
  if (p.data !== undefined) return el('pre', {}, JSON.stringify(p.data, null, 2));
  if (p.raw !== undefined) {
    const type = p.mediaType || 'application/octet-stream';
    return el('p', {}, 'file ', el('a', { href: `data:${type};base64,${p.raw}`, download: p.filename || 'file' }, p.filename || 'file'),
      ` (${type}, ${Math.floor(p.raw.length * 3 / 4)} bytes)`);
  }
  if (p.url !== undefined) return el('p', {}, 'file at ', el('code', {}, p.url), ' (not fetched)');
  return el('pre', {}, JSON.stringify(p));
}

async function taskAction(method, request, label) {
  addEntry(label, '', '');
  const err = await call(method, request, onAnswer);
  setStatus(err ? errorText(err) : label + ': done.', !!err);
}

// ---- tasks ----

async function listTasks(ev, page) {
  if (ev) ev.preventDefault();
  if (page === undefined) { ui.pages = ['']; ui.page = 0; } else ui.page = page;
  const request = { pageSize: Number($('f-size').value) || 20, pageToken: ui.pages[ui.page], includeArtifacts: false };
  if ($('f-context').value.trim()) request.contextId = $('f-context').value.trim();
  if ($('f-state').value) request.status = $('f-state').value;
  const err = await call('ListTasks', request, (line) => {
    if (!line.result) return;
    const r = line.result;
    $('tasks-table').tBodies[0].replaceChildren(...(r.tasks || []).map((t) => el('tr', { class: 'pick', 'data-task': t.id, onclick: () => openTask(t.id) },
      el('td', {}, el('code', {}, t.id)), el('td', {}, el('span', { class: 'state ' + shortState(t.status.state) }, shortState(t.status.state))),
      el('td', {}, el('code', {}, t.contextId)), el('td', {}, t.status.timestamp || ''))));
    ui.pages[ui.page + 1] = r.nextPageToken || '';
    $('tasks-next').disabled = !r.nextPageToken;
    $('tasks-prev').disabled = ui.page === 0;
    $('tasks-info').textContent = `page ${ui.page + 1}` + (r.totalSize !== undefined ? `, ${r.totalSize} task(s) in all` : '');
  });
  if (err) setStatus('ListTasks: ' + errorText(err), true);
}

async function openTask(id) {
  const box = $('task-detail');
  box.replaceChildren(el('p', {}, 'Loading ' + id + '…'));
  // timelineLength is an A2A 1.1 member: the client asks an agent whose
  // card lists 1.1 in 1.1, and the task comes with its timeline; an agent
  // of 1.0 ignores the member.
  const err = await call('GetTask', { id, timelineLength: 1000 }, (line) => {
    if (!line.result) return;
    const t = line.result;
    const st = t.status || {};
    box.replaceChildren(
      el('h2', {}, 'Task ', el('code', {}, t.id), ' ', el('span', { class: 'state ' + shortState(st.state) }, shortState(st.state))),
      el('p', { class: 'row' },
        el('button', { type: 'button', class: 'secondary', onclick: () => { $('task-id').value = t.id; $('context-id').value = t.contextId; showTab('send'); } }, 'Continue this task'),
        el('button', { type: 'button', class: 'secondary', onclick: () => { showTab('send'); resetTimeline(); setTask(t.id, t.contextId, st.state); taskAction('SubscribeToTask', { id: t.id }, 'subscribe'); } }, 'Subscribe'),
        el('button', { type: 'button', class: 'secondary', onclick: async () => { await call('CancelTask', { id: t.id }, (l) => { if (l.error) setStatus(errorText(l.error), true); }); openTask(t.id); } }, 'Cancel')),
      ...timelineView(t),
      el('h3', {}, 'History'),
      el('ol', { class: 'timeline' }, ...(t.history || []).map((m) => el('li', {}, el('strong', {}, m.role === 'ROLE_AGENT' ? 'agent' : 'user'), ' ', partsText(m.parts)))),
      el('h3', {}, 'Artifacts'),
      ...(t.artifacts || []).map((a) => el('div', { class: 'artifact' }, el('strong', {}, a.name || a.artifactId), ...mergeText(a.parts || []).map(renderPart))),
      el('details', {}, el('summary', {}, 'The task as JSON'), el('pre', {}, JSON.stringify(t, null, 2))));
  });
  if (err) box.replaceChildren(el('p', { class: 'detail' }, 'GetTask: ' + errorText(err)));
}

// timelineView shows an A2A 1.1 task's timeline (spec §3.2.8) beside its
// artifacts, in generation order: each entry at its generation, each
// artifact where it started, with its span. An entry of a kind this page
// does not know is shown as such and skipped (readers fail open). Nothing
// for a task without a timeline (an agent of 1.0).
function timelineView(t) {
  if (!t.timeline || !t.timeline.length) return [];
  const rows = t.timeline.map((e) => {
    const g = Number(e.generation || 0);
    if (e.message) return { g, li: el('li', { 'data-generation': g }, el('span', { class: 'time' }, String(g)), el('strong', {}, e.message.role === 'ROLE_AGENT' ? 'agent' : 'user'), ' ', partsText(e.message.parts)) };
    if (e.status) {
      const s = shortState(e.status.state);
      return { g, li: el('li', { 'data-generation': g }, el('span', { class: 'time' }, String(g)), el('span', { class: 'state ' + s }, s), ' ', e.status.message ? partsText(e.status.message.parts) : '') };
    }
    return { g, li: el('li', { 'data-generation': g }, el('span', { class: 'time' }, String(g)), el('em', {}, 'an entry of a kind this page does not know')) };
  });
  for (const a of t.artifacts || []) {
    if (!a.startGeneration) continue;
    const g = Number(a.startGeneration), end = Number(a.endGeneration || 0);
    const span = end ? (end === g ? `generation ${g}` : `generations ${g}–${end}`) : `from generation ${g}, streaming`;
    rows.push({ g, artifact: true, li: el('li', { 'data-generation': g, 'data-artifact': a.artifactId }, el('span', { class: 'time' }, String(g)), el('strong', {}, 'artifact'), ' ', el('code', {}, a.artifactId), ` (${span})`) });
  }
  rows.sort((x, y) => x.g - y.g || (x.artifact ? 1 : 0) - (y.artifact ? 1 : 0));
  return [el('h3', {}, 'Timeline'), el('ol', { class: 'timeline', id: 'task-timeline' }, ...rows.map((r) => r.li))];
}

// ---- traffic ----

function renderTraffic() {
  const n = ui.calls.reduce((s, c) => s + c.traffic.length, 0);
  $('traffic-count').textContent = n ? String(n) : '';
  $('traffic').replaceChildren(...ui.calls.slice(0, 50).map((c) => el('div', { class: 'call' },
    el('strong', {}, c.method), ' ', el('span', { class: 'time' }, c.at),
    ...c.traffic.map(renderExchange))));
}

function renderExchange(x) {
  const ct = (x.responseHeaders && (x.responseHeaders['Content-Type'] || [])[0]) || '';
  const body = ct.startsWith('text/event-stream')
    ? x.responseBody.split(/\r?\n\r?\n/).filter((f) => f.trim()).map((f) => el('pre', { class: 'frame' }, f))
    : [el('pre', {}, x.binary ? x.responseBody : pretty(x.responseBody))];
  return el('details', { class: 'exchange' },
    el('summary', {}, `${x.method} ${x.url} → ${x.error ? 'error: ' + x.error : x.status} (${x.millis} ms, ${x.size} bytes${x.truncated ? ', cut' : ''})`),
    el('h3', {}, 'Request headers'), el('pre', {}, headersText(x.requestHeaders)),
    x.requestBody ? [el('h3', {}, 'Request body'), el('pre', {}, x.binary ? x.requestBody : pretty(x.requestBody))] : null,
    el('h3', {}, 'Response headers'), el('pre', {}, headersText(x.responseHeaders)),
    el('h3', {}, ct.startsWith('text/event-stream') ? 'Response: SSE frames' : 'Response body'), ...body,
    x.trailers ? [el('h3', {}, 'Trailers'), el('pre', {}, headersText(x.trailers))] : null);
}

function headersText(h) {
  return Object.entries(h || {}).map(([k, vs]) => vs.map((v) => k + ': ' + v).join('\n')).join('\n');
}

// ---- push ----

async function pollPush() {
  try {
    const resp = await api('/api/push?after=' + ui.pushSeq);
    const out = await resp.json();
    for (const n of out.notifications) {
      ui.pushSeq = n.seq;
      $('push-list').prepend(el('li', { 'data-seq': n.seq },
        el('span', { class: 'time' }, n.at),
        n.valid ? el('span', { class: 'state ' + shortState(n.state) }, shortState(n.state)) : el('span', { class: 'state error' }, 'invalid'),
        el('strong', {}, n.kind || 'notification'), ' ', n.taskId ? el('code', {}, n.taskId) : '',
        n.problem ? el('div', { class: 'detail' }, n.problem) : null,
        el('details', {}, el('summary', {}, 'headers and body'), el('pre', {}, headersText(n.headers)), el('pre', {}, pretty(n.body)))));
    }
    $('push-count').textContent = ui.pushSeq ? String(ui.pushSeq) : '';
  } catch (e) { /* the inspector stopped; try again later */ }
  setTimeout(pollPush, 1500);
}

// ---- check ----

async function runCheck() {
  $('check-run').disabled = true;
  $('check-status').textContent = 'running parley check… (this takes a while)';
  try {
    const out = await (await api('/api/check', conn())).json();
    if (out.error) { $('check-status').textContent = 'could not run: ' + errorText(out.error); return; }
    renderChecks($('check-results'), $('check-counts'), out.report);
    $('check-out').textContent = out.text;
    $('check-status').textContent = out.report.counts.mustFailed ? 'done: a MUST failed' : 'done: no MUST failed';
  } catch (e) {
    $('check-status').textContent = e.message;
  } finally {
    $('check-run').disabled = false;
  }
}

// ---- start ----

async function start() {
  for (const b of document.querySelectorAll('#tabs button')) b.addEventListener('click', () => showTab(b.dataset.tab));
  $('connect').addEventListener('submit', loadCard);
  $('composer').addEventListener('submit', send);
  $('clear').addEventListener('click', () => { $('task-id').value = ''; $('context-id').value = ''; resetTimeline(); $('task-actions').hidden = true; $('task-state').textContent = ''; });
  $('tl-cancel').addEventListener('click', () => taskAction('CancelTask', { id: ui.task.id }, 'cancel'));
  $('tl-subscribe').addEventListener('click', () => taskAction('SubscribeToTask', { id: ui.task.id }, 'subscribe'));
  $('tl-get').addEventListener('click', () => taskAction('GetTask', { id: ui.task.id }, 'get'));
  $('task-filters').addEventListener('submit', (e) => listTasks(e));
  $('tasks-next').addEventListener('click', () => listTasks(null, ui.page + 1));
  $('tasks-prev').addEventListener('click', () => listTasks(null, ui.page - 1));
  $('check-run').addEventListener('click', runCheck);
  if (code) {
    // Trade the code for the cookie, and drop it from the address bar and
    // the history entry. A used code is refused; a cookie from an earlier
    // exchange may still let the page in.
    try { await fetch('/session', { method: 'POST', body: code }); } catch (e) { /* the API call below reports it */ }
    params.delete('code');
    history.replaceState(null, '', params.toString() ? '#' + params.toString() : location.pathname);
  }
  try {
    const info = await (await api('/api/info')).json();
    ui.pushURL = info.pushUrl;
    $('push-url').textContent = info.pushUrl;
    const target = params.get('url') || info.target;
    if (target) { $('url').value = target; loadCard(); }
  } catch (e) { setStatus(e.message, true); return; }
  pollPush();
}

start();
