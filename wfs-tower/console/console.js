// wfs admin console: a static page the API server serves at <prefix>/external/v1/console.
//
// Everything goes through the public API, relative to the page, so it works under any
// prefix. The page runs under a strict Content-Security-Policy: no inline script or
// style, so the DOM is built with createElement/textContent and shown or hidden with the
// `hidden` attribute. Credentials (the bearer token, the console's own API key, any
// secret on screen) live in the `session` variable only, never in storage: a reload or
// a sign-out forgets them.

const base = new URL('.', location.href); // <prefix>/external/v1/
const HOUR = 3600 * 1000;
const NDJSON = 'application/x-ndjson';
const HOOK_KEY_NAME = 'wfs console session';

// Enums of openapi.yaml: Scope, WebhookEventType, AuditActionName.
const SCOPES = ['workforce:read', 'availability:read', 'workforce:write', 'webhooks:manage'];
const EVENT_TYPES = [
  'workforce.resource.updated', 'workforce.resource.deleted', 'shift_slot.created',
  'shift.created', 'shift.updated', 'shift.cancelled', 'staff.created', 'staff.deactivated',
  'job_role.created', 'job_role.updated', 'job_role.deleted', 'location.created',
  'location.updated', 'webhook.test',
];
const AUDIT_ACTIONS = [
  'api_key.created', 'api_key.rotated', 'api_key.revoked', 'api_key.refused',
  'api_key.address_refused', 'sign_in.succeeded', 'sign_in.failed', 'admin.restored',
  'webhook_endpoint.created', 'webhook_endpoint.updated', 'webhook_endpoint.deleted',
  'webhook_endpoint.secret_rotated', 'api.write', 'audit.dropped',
];

/** The signed-in session, or null. Replaced (never mutated back) on sign-out, so a
 * request that started in one session can tell that it ended. */
let session = null;
let inFlight = 0;

const byId = (id) => document.getElementById(id);
const enc = encodeURIComponent;

// ---------------------------------------------------------------- small helpers

class ApiError extends Error {
  constructor(status, message, handled = false) {
    super(message);
    this.status = status;
    this.handled = handled; // already shown (e.g. by a sign-out): report() stays quiet
  }
}

function busy(delta) {
  inFlight += delta;
  document.body.dataset.busy = inFlight > 0 ? '1' : '0';
}

function setStatus(message, isError = false) {
  const el = byId('status');
  el.textContent = message;
  el.classList.toggle('error', isError);
}

function report(err) {
  if (err instanceof ApiError && err.handled) return;
  setStatus(err && err.message ? err.message : String(err), true);
}

/** Runs one user action: busy while it runs, any error shown in #status. */
async function task(fn) {
  busy(1);
  try {
    return await fn();
  } catch (err) {
    report(err);
    return undefined;
  } finally {
    busy(-1);
  }
}

/** A fresh Idempotency-Key. crypto.randomUUID exists only in secure contexts (https,
 * localhost); getRandomValues everywhere, so fall back to a v4 UUID made from it. */
function newId() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** RFC 3339 UTC without milliseconds. */
function rfc3339(ms) {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** A datetime-local value (the browser's local time) as RFC 3339 UTC; '' stays ''. */
function localToIso(value) {
  if (!value) return '';
  const ms = new Date(value).getTime(); // no offset in the string: read as local time
  if (Number.isNaN(ms)) throw new Error(`Not a date and time: ${value}`);
  return rfc3339(ms);
}

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
}

/** A <time> in the browser's locale, the ISO value in datetime and title. */
function timeEl(iso, none = '—') {
  if (!iso) return el('span', none);
  const d = new Date(iso);
  const t = el('time', Number.isNaN(d.getTime()) ? iso : d.toLocaleString());
  t.dateTime = iso;
  t.title = iso;
  return t;
}

function cell(tr, content, cls) {
  const td = el('td', null, cls);
  if (content instanceof Node) td.append(content);
  else td.textContent = content === undefined || content === null || content === '' ? '—' : String(content);
  tr.append(td);
  return td;
}

function button(label, cls, onClick, ariaLabel) {
  const b = el('button', label, cls);
  b.type = 'button';
  if (ariaLabel) b.setAttribute('aria-label', ariaLabel);
  b.addEventListener('click', onClick);
  return b;
}

function actionsCell(tr, buttons) {
  const div = el('div', null, 'row-actions');
  div.append(...buttons);
  return cell(tr, div.childElementCount ? div : '—');
}

/** Empties a table's body and toggles its "nothing here" note. */
function fillTable(tableId, emptyId, items, makeRow) {
  const tbody = byId(tableId).tBodies[0];
  tbody.replaceChildren(...items.map(makeRow));
  byId(emptyId).hidden = items.length > 0;
}

function checkedValues(containerId) {
  return [...byId(containerId).querySelectorAll('input[type=checkbox]:checked')].map((c) => c.value);
}

function addCheckboxes(containerId, values, prefix) {
  const box = byId(containerId);
  values.forEach((value, i) => {
    const label = el('label', null, 'check');
    const input = el('input');
    input.type = 'checkbox';
    input.value = value;
    input.id = `${prefix}-${i}`;
    label.append(input, ` ${value}`);
    box.append(label);
  });
}

function focusHeading(id) {
  const h = byId(id);
  if (h) h.focus();
}

// ---------------------------------------------------------------- the API

async function readBody(res) {
  const text = await res.text();
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function errorMessage(res, body) {
  const msg = body && typeof body === 'object' && body.error && body.error.message;
  if (typeof msg === 'string' && msg) return msg;
  return `The server answered ${res.status} ${res.statusText}`.trim();
}

/**
 * Calls the API. `auth`: 'bearer' (the sign-in token), 'key' (the console's own
 * webhooks:manage key, created on first use) or 'none'. Answers the parsed JSON (or a
 * Blob when `accept` is NDJSON); throws ApiError with the API's own message.
 * A 401 signs out, except on a key route, where the console's key is dropped and the
 * call retried once with a fresh one (someone may have revoked or rotated it).
 */
async function api(method, path, opts = {}) {
  const { body, query, auth = 'bearer', accept = 'application/json' } = opts;
  const idem = opts.idem || newId(); // one per user action, kept across the key retry
  const mine = session;
  if (auth !== 'none') {
    if (!mine) throw new ApiError(401, 'Not signed in.', true);
    if (Date.now() >= mine.expiresAt) {
      signOut('Your session has expired. Please sign in again.');
      throw new ApiError(401, 'Session expired.', true);
    }
  }
  const url = new URL(path, base);
  for (const [k, v] of Object.entries(query || {})) {
    if (v !== undefined && v !== null && v !== '') url.searchParams.set(k, String(v));
  }
  const headers = { Accept: accept };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (method !== 'GET') headers['Idempotency-Key'] = idem;
  if (auth === 'bearer') headers.Authorization = `Bearer ${mine.token}`;
  if (auth === 'key') {
    const key = await hookKey(mine);
    headers['x-api-key'] = key.clientId;
    headers['x-api-secret'] = key.secret;
  }

  busy(1);
  let res;
  let data;
  try {
    res = await fetch(url, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
      redirect: 'error',
    });
    data = res.ok && accept === NDJSON ? await res.blob() : await readBody(res);
  } catch {
    throw new ApiError(0, 'Network error: the server could not be reached. Check the connection and try again.');
  } finally {
    busy(-1);
  }
  // Signed out (or in again) meanwhile: drop the answer rather than show it.
  if (auth !== 'none' && session !== mine) throw new ApiError(0, 'Signed out.', true);
  if (res.ok) return data;

  const message = errorMessage(res, data);
  if (res.status === 401 && auth === 'key' && !opts.retried) {
    if (mine.hookKey) mine.hookKey = null;
    return api(method, path, { ...opts, idem, retried: true });
  }
  if (res.status === 401 && auth !== 'none') {
    signOut(message);
    throw new ApiError(401, message, true);
  }
  throw new ApiError(res.status, message);
}

/** The console's own API key for the webhook routes: made once per session. */
function hookKey(sess) {
  if (sess.hookKey) return Promise.resolve(sess.hookKey);
  if (!sess.hookKeyPending) {
    sess.hookKeyPending = createHookKey(sess).finally(() => { sess.hookKeyPending = null; });
  }
  return sess.hookKeyPending;
}

async function createHookKey(sess) {
  // An hour ahead, but not past the sign-in's end: once the token is gone the console
  // can no longer revoke the key, so let it die with the session.
  const expires = Math.min(Date.now() + HOUR, sess.expiresAt);
  const k = await api('POST', 'auth/keys', {
    body: { name: HOOK_KEY_NAME, scopes: ['webhooks:manage'], expiresAt: rfc3339(expires) },
  });
  if (!k || !k.clientSecret) throw new ApiError(0, 'The API answered the console key without its secret.');
  sess.hookKey = { id: k.id, clientId: k.clientId, secret: k.clientSecret };
  setStatus(`Created the temporary API key “${HOOK_KEY_NAME}” for this session.`);
  return sess.hookKey;
}

/** Best effort; `keepalive` lets it finish while the page unloads. */
async function revokeHookKey(sess) {
  const key = sess.hookKey;
  if (!key || !sess.token) return;
  sess.hookKey = null;
  busy(1);
  try {
    await fetch(new URL(`auth/keys/${enc(key.id)}/revoke`, base), {
      method: 'POST',
      headers: { Authorization: `Bearer ${sess.token}`, 'Idempotency-Key': newId(), Accept: 'application/json' },
      keepalive: true,
    });
  } catch {
    // It expires within the hour anyway.
  } finally {
    busy(-1);
  }
}

// ---------------------------------------------------------------- session

async function onSignIn(ev) {
  ev.preventDefault();
  const email = byId('signin-email').value.trim();
  const password = byId('signin-password').value;
  const errorEl = byId('signin-error');
  errorEl.textContent = '';
  await task(async () => {
    // The token lasts one hour from its issue, which is after this instant: counting
    // from here can only end the session a little early, never late.
    const started = Date.now();
    let r;
    try {
      r = await api('POST', 'auth/signin', { auth: 'none', body: { email, password } });
    } catch (err) {
      errorEl.textContent = err.message;
      throw err;
    }
    byId('signin-password').value = '';
    startSession(r, started + HOUR);
  });
}

function startSession(r, expiresAt) {
  session = {
    token: r.accessToken,
    expiresAt,
    hookKey: null,
    hookKeyPending: null,
    secret: null,
    editing: null,
    deliveries: null,
    audit: { filters: {}, next: null, cursor: null },
  };
  const u = r.user || {};
  const name = [u.firstName, u.lastName].filter(Boolean).join(' ');
  const company = r.activeCompany ? r.activeCompany.name : '';
  byId('session-user').textContent = `${name || u.email}${u.email ? ` (${u.email})` : ''}${company ? `, ${company}` : ''}`;
  const exp = byId('session-expiry');
  exp.dateTime = new Date(expiresAt).toISOString();
  exp.title = exp.dateTime;
  showExpiry();
  session.tick = setInterval(showExpiry, 30 * 1000);
  session.timer = setTimeout(() => signOut('Your session has expired. Please sign in again.'), expiresAt - Date.now());

  document.body.dataset.state = 'signed-in';
  byId('screen-signin').hidden = true;
  byId('session').hidden = false;
  byId('nav').hidden = false;
  byId('signin-error').textContent = '';
  setStatus(u.mustChangePassword
    ? 'Signed in. This account must change its password (not possible from this console).'
    : 'Signed in.');
  show('keys');
}

function showExpiry() {
  if (!session) return;
  const left = Math.max(0, Math.round((session.expiresAt - Date.now()) / 60000));
  byId('session-expiry').textContent =
    `${new Date(session.expiresAt).toLocaleTimeString()} (in about ${left} min)`;
}

/** Wipes every credential and screen; `message` (the API's, on a 401) goes on the
 * sign-in screen. */
function signOut(message = '') {
  const old = session;
  if (!old) return;
  session = null;
  clearInterval(old.tick);
  clearTimeout(old.timer);
  revokeHookKey(old).finally(() => { old.token = null; });
  old.secret = null;

  dismissSecret(false);
  const dialog = byId('confirm-dialog');
  if (dialog.open) dialog.close('cancel');
  for (const id of ['keys-table', 'endpoints-table', 'deliveries-table', 'audit-table']) {
    byId(id).tBodies[0].replaceChildren();
  }
  for (const id of ['key-create-form', 'endpoint-create-form', 'replay-form', 'audit-filter-form']) {
    byId(id).reset();
  }
  endEdit();
  for (const id of ['deliveries', 'audit-next', 'audit-first', 'session', 'nav',
    'screen-keys', 'screen-webhooks', 'screen-audit']) {
    byId(id).hidden = true;
  }
  byId('session-user').textContent = '';
  byId('session-expiry').textContent = '';
  byId('signin-password').value = '';

  document.body.dataset.state = 'signed-out';
  byId('screen-signin').hidden = false;
  byId('signin-error').textContent = message;
  setStatus(message || 'Signed out.', Boolean(message));
  byId('signin-email').focus();
}

// ---------------------------------------------------------------- navigation

const SCREENS = {
  keys: { heading: 'keys-title', load: loadKeys },
  webhooks: { heading: 'webhooks-title', load: loadEndpoints },
  audit: { heading: 'audit-title', load: () => loadAudit(null) },
};

function show(name) {
  if (!session) return;
  for (const key of Object.keys(SCREENS)) {
    byId(`screen-${key}`).hidden = key !== name;
    const nav = byId(`nav-${key}`);
    if (key === name) nav.setAttribute('aria-current', 'page');
    else nav.removeAttribute('aria-current');
  }
  focusHeading(SCREENS[name].heading);
  task(SCREENS[name].load);
}

// ---------------------------------------------------------------- confirm dialog, secret panel

/** Resolves true when the user confirms; Escape or Cancel resolve false. */
function confirmAction(text, okLabel) {
  const dialog = byId('confirm-dialog');
  if (dialog.open) return Promise.resolve(false);
  byId('confirm-text').textContent = text;
  byId('confirm-ok').textContent = okLabel;
  dialog.returnValue = '';
  const opener = document.activeElement;
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => {
      if (opener && opener.isConnected) opener.focus();
      resolve(dialog.returnValue === 'ok');
    }, { once: true });
    dialog.showModal();
    byId('confirm-cancel').focus(); // the safe choice first
  });
}

/** Shows a secret once; it lives in the DOM and in session.secret until dismissed. */
function showSecret(title, secret, clientId) {
  if (!secret) {
    setStatus('The API answered without the secret (a replayed request): rotate again to get a new one.', true);
    return;
  }
  session.secret = secret;
  byId('secret-title').textContent = title;
  byId('secret-value').textContent = secret;
  byId('secret-client-id').textContent = clientId || '';
  byId('secret-client-row').hidden = !clientId;
  const panel = byId('secret-panel');
  panel.hidden = false;
  panel.focus();
}

function dismissSecret(refocus = true) {
  if (session) session.secret = null;
  byId('secret-value').textContent = '';
  byId('secret-client-id').textContent = '';
  byId('secret-panel').hidden = true;
  const current = session && Object.keys(SCREENS).find((k) => !byId(`screen-${k}`).hidden);
  if (refocus && current) focusHeading(SCREENS[current].heading);
}

async function copySecret() {
  const node = byId('secret-value');
  try {
    await navigator.clipboard.writeText(node.textContent);
    setStatus('Secret copied to the clipboard.');
  } catch {
    // No clipboard API (plain http) or no permission: select it for a manual copy.
    getSelection().selectAllChildren(node);
    setStatus('Copying is not available here: the secret is selected, press Ctrl+C (⌘C on a Mac).');
  }
}

// ---------------------------------------------------------------- API keys

async function loadKeys() {
  const keys = await api('GET', 'auth/keys');
  fillTable('keys-table', 'keys-empty', keys || [], keyRow);
}

function keyRow(k) {
  const tr = el('tr');
  tr.dataset.keyId = k.id;
  tr.dataset.clientId = k.clientId;
  const mine = session && session.hookKey && session.hookKey.id === k.id;
  cell(tr, mine ? `${k.name} (this console)` : k.name);
  cell(tr, el('code', k.clientId));
  cell(tr, (k.scopes || []).join(', '));
  cell(tr, (k.allowedIps || []).length ? k.allowedIps.join(', ') : 'any');
  cell(tr, timeEl(k.expiresAt, 'never'));
  cell(tr, k.status, `status-${k.status}`);
  cell(tr, timeEl(k.lastUsedAt, 'never'));
  cell(tr, timeEl(k.createdOn));
  const buttons = k.status === 'revoked' ? [] : [
    button('Rotate', 'key-rotate', () => rotateKey(k), `Rotate key ${k.name}`),
    button('Revoke', 'key-revoke danger', () => revokeKey(k), `Revoke key ${k.name}`),
  ];
  actionsCell(tr, buttons);
  return tr;
}

async function onCreateKey(ev) {
  ev.preventDefault();
  const form = ev.currentTarget;
  await task(async () => {
    const body = { name: byId('key-name').value.trim() };
    const scopes = checkedValues('key-scopes');
    if (scopes.length) body.scopes = scopes;
    const ips = byId('key-ips').value.split(/\r?\n/).map((s) => s.trim()).filter(Boolean);
    if (ips.length) body.allowedIps = ips;
    const expires = localToIso(byId('key-expires').value);
    if (expires) body.expiresAt = expires;
    const k = await api('POST', 'auth/keys', { body });
    form.reset();
    showSecret(`Secret of the new key “${body.name}”`, k.clientSecret, k.clientId);
    setStatus(`API key “${body.name}” created.`);
    await loadKeys();
  });
}

async function rotateKey(k) {
  const ok = await confirmAction(
    `Rotate the secret of API key “${k.name}” (${k.clientId})? The current secret stops working at once.`,
    'Rotate secret');
  if (!ok) return;
  await task(async () => {
    const r = await api('POST', `auth/keys/${enc(k.id)}/rotate`);
    if (session.hookKey && session.hookKey.id === k.id && r.clientSecret) session.hookKey.secret = r.clientSecret;
    showSecret(`New secret of “${k.name}”`, r.clientSecret, r.clientId);
    setStatus(`Secret of “${k.name}” rotated.`);
    await loadKeys();
  });
}

async function revokeKey(k) {
  const ok = await confirmAction(
    `Revoke API key “${k.name}” (${k.clientId})? Every later request with it is refused. This cannot be undone.`,
    'Revoke key');
  if (!ok) return;
  await task(async () => {
    await api('POST', `auth/keys/${enc(k.id)}/revoke`);
    if (session.hookKey && session.hookKey.id === k.id) session.hookKey = null;
    setStatus(`API key “${k.name}” revoked.`);
    await loadKeys();
  });
}

// ---------------------------------------------------------------- webhook endpoints

async function loadEndpoints() {
  const list = await api('GET', 'webhooks/endpoints', { auth: 'key' });
  fillTable('endpoints-table', 'endpoints-empty', list || [], endpointRow);
}

function endpointRow(ep) {
  const tr = el('tr');
  tr.dataset.endpointId = ep.id;
  cell(tr, el('code', ep.url, 'url'));
  cell(tr, ep.description);
  cell(tr, (ep.eventTypes || []).length ? ep.eventTypes.join(', ') : 'every type');
  cell(tr, ep.disabledReason ? `${ep.status} (${ep.disabledReason})` : ep.status, `status-${ep.status}`);
  cell(tr, timeEl(ep.updatedOn));
  const enabled = ep.status === 'enabled';
  actionsCell(tr, [
    button('Edit', 'endpoint-edit', () => startEdit(ep), `Edit endpoint ${ep.url}`),
    button(enabled ? 'Disable' : 'Enable', 'endpoint-toggle', () => toggleEndpoint(ep),
      `${enabled ? 'Disable' : 'Enable'} endpoint ${ep.url}`),
    button('Send test', 'endpoint-test', () => testEndpoint(ep), `Send test event to ${ep.url}`),
    button('Deliveries', 'endpoint-deliveries', () => openDeliveries(ep), `Deliveries to ${ep.url}`),
    button('Rotate secret', 'endpoint-rotate', () => rotateEndpoint(ep), `Rotate secret of ${ep.url}`),
    button('Delete', 'endpoint-delete danger', () => deleteEndpoint(ep), `Delete endpoint ${ep.url}`),
  ]);
  return tr;
}

const epPath = (ep, rest = '') => `webhooks/endpoints/${enc(ep.id)}${rest}`;

/** The create form doubles as the edit form. */
function startEdit(ep) {
  session.editing = ep;
  byId('endpoint-url').value = ep.url;
  byId('endpoint-description').value = ep.description || '';
  for (const c of byId('endpoint-events').querySelectorAll('input[type=checkbox]')) {
    c.checked = (ep.eventTypes || []).includes(c.value);
  }
  byId('endpoint-form-title').textContent = 'Edit endpoint';
  byId('endpoint-create-submit').textContent = 'Save changes';
  byId('endpoint-edit-cancel').hidden = false;
  byId('endpoint-url').focus();
}

function endEdit() {
  if (session) session.editing = null;
  byId('endpoint-create-form').reset();
  byId('endpoint-form-title').textContent = 'Add an endpoint';
  byId('endpoint-create-submit').textContent = 'Add endpoint';
  byId('endpoint-edit-cancel').hidden = true;
}

async function onEndpointSubmit(ev) {
  ev.preventDefault();
  const editing = session.editing;
  const url = byId('endpoint-url').value.trim();
  const description = byId('endpoint-description').value.trim();
  const eventTypes = checkedValues('endpoint-events');
  await task(async () => {
    if (editing) {
      // An empty description clears it (null); an empty list means every type.
      await api('PATCH', epPath(editing), {
        auth: 'key', body: { url, description: description || null, eventTypes },
      });
      setStatus('Endpoint updated.');
    } else {
      const body = { url };
      if (description) body.description = description;
      if (eventTypes.length) body.eventTypes = eventTypes;
      const r = await api('POST', 'webhooks/endpoints', { auth: 'key', body });
      showSecret(`Signing secret of ${r.url}`, r.secret);
      setStatus('Endpoint added.');
    }
    endEdit();
    await loadEndpoints();
  });
}

async function toggleEndpoint(ep) {
  const enable = ep.status !== 'enabled';
  await task(async () => {
    await api('PATCH', epPath(ep), { auth: 'key', body: { enabled: enable } });
    setStatus(`Endpoint ${enable ? 'enabled' : 'disabled'}.`);
    await loadEndpoints();
  });
}

async function deleteEndpoint(ep) {
  const ok = await confirmAction(`Delete the webhook endpoint ${ep.url}? Its pending deliveries stop.`, 'Delete endpoint');
  if (!ok) return;
  await task(async () => {
    const r = await api('DELETE', epPath(ep), { auth: 'key' });
    if (session.editing && session.editing.id === ep.id) endEdit();
    if (session.deliveries && session.deliveries.ep.id === ep.id) closeDeliveries();
    setStatus((r && r.message) || 'Webhook endpoint deleted');
    await loadEndpoints();
  });
}

async function rotateEndpoint(ep) {
  const ok = await confirmAction(
    `Rotate the signing secret of ${ep.url}? The previous secret also signs for 24 hours.`, 'Rotate secret');
  if (!ok) return;
  await task(async () => {
    const r = await api('POST', epPath(ep, '/rotate-secret'), { auth: 'key' });
    showSecret(`New signing secret of ${ep.url}`, r.secret);
    setStatus('Signing secret rotated.');
  });
}

async function testEndpoint(ep) {
  await task(async () => {
    const r = await api('POST', epPath(ep, '/test'), { auth: 'key' });
    setStatus(`Test event queued to ${ep.url} (event id ${r.eventId}).`);
    if (session.deliveries && session.deliveries.ep.id === ep.id) await loadDeliveries(null);
  });
}

// ---------------------------------------------------------------- deliveries and replay

async function openDeliveries(ep) {
  session.deliveries = { ep, status: '', cursor: null, next: null };
  byId('deliveries-title').textContent = `Deliveries to ${ep.url}`;
  byId('deliveries-status').value = '';
  byId('replay-form').reset();
  byId('deliveries').hidden = false;
  focusHeading('deliveries-title');
  await task(() => loadDeliveries(null));
}

function closeDeliveries() {
  if (session) session.deliveries = null;
  byId('deliveries').hidden = true;
  byId('deliveries-table').tBodies[0].replaceChildren();
}

/** One page: the newest (cursor null) or the one a previous answer pointed to. A
 * cursor goes with the status filter it was made under. */
async function loadDeliveries(cursor) {
  const d = session.deliveries;
  if (!d) return;
  if (!cursor) d.status = byId('deliveries-status').value;
  const page = await api('GET', epPath(d.ep, '/deliveries'), {
    auth: 'key', query: { status: d.status, cursor },
  });
  if (session.deliveries !== d) return;
  d.cursor = cursor;
  d.next = (page.pagination && page.pagination.next_cursor) || null;
  fillTable('deliveries-table', 'deliveries-empty', page.data || [], (x) => deliveryRow(d.ep, x));
  byId('deliveries-next').hidden = !d.next;
  byId('deliveries-first').hidden = !cursor;
}

function deliveryRow(ep, x) {
  const tr = el('tr');
  tr.dataset.deliveryId = x.id;
  cell(tr, x.eventType);
  cell(tr, x.status, `delivery-status status-${x.status}`);
  cell(tr, x.attempts);
  const code = x.lastResponseStatus === null || x.lastResponseStatus === undefined ? '' : String(x.lastResponseStatus);
  const error = x.lastError === `HTTP ${code}` ? '' : x.lastError; // don't say 503 twice
  cell(tr, [code, error].filter(Boolean).join(': '));
  cell(tr, timeEl(x.lastAttemptAt));
  cell(tr, timeEl(x.nextAttemptAt));
  cell(tr, timeEl(x.createdOn));
  actionsCell(tr, [button('Retry', 'delivery-retry', () => retryDelivery(ep, x, tr), `Retry delivery of ${x.eventType}`)]);
  return tr;
}

async function retryDelivery(ep, x, tr) {
  await task(async () => {
    const r = await api('POST', epPath(ep, `/deliveries/${enc(x.id)}/retry`), { auth: 'key' });
    if (tr.isConnected && r) tr.replaceWith(deliveryRow(ep, r));
    setStatus(`Delivery of ${x.eventType} queued for another attempt.`);
  });
}

async function onReplay(ev) {
  ev.preventDefault();
  const d = session.deliveries;
  if (!d) return;
  await task(async () => {
    const body = { since: localToIso(byId('replay-from').value) };
    const until = localToIso(byId('replay-to').value);
    if (until) body.until = until;
    const r = await api('POST', epPath(d.ep, '/replay'), { auth: 'key', body });
    const n = r ? r.queued : 0;
    setStatus(`Replay: ${n} ${n === 1 ? 'delivery' : 'deliveries'} queued.`);
    await loadDeliveries(null);
  });
}

// ---------------------------------------------------------------- audit log

/** The filter form as the route's query parameters (empty ones left out by api()). */
function auditFilters() {
  return {
    from: localToIso(byId('audit-from').value),
    to: localToIso(byId('audit-to').value),
    action: byId('audit-action').value.split(',').map((s) => s.trim()).filter(Boolean).join(','),
    actor: byId('audit-actor').value.trim(),
    limit: byId('audit-limit').value.trim(),
  };
}

/** cursor null: the newest page under the form's filters; otherwise the page the
 * cursor names, under the filters it was made with (the API insists). */
async function loadAudit(cursor) {
  const a = session.audit;
  const filters = cursor ? a.filters : auditFilters();
  const page = await api('GET', 'auth/audit-log', { query: { ...filters, cursor } });
  if (session.audit !== a) return;
  a.filters = filters;
  a.cursor = cursor;
  a.next = (page.pagination && page.pagination.next_cursor) || null;
  byId('audit-cursor').value = cursor || '';
  fillTable('audit-table', 'audit-empty', page.data || [], auditRow);
  byId('audit-next').hidden = !a.next;
  byId('audit-first').hidden = !cursor;
}

function auditRow(e) {
  const tr = el('tr');
  tr.dataset.entryId = e.id;
  const req = e.request || {};
  cell(tr, timeEl(e.occurred_at));
  cell(tr, e.action, 'audit-action');
  cell(tr, e.actor ? `${e.actor.type} ${e.actor.id}` : '');
  cell(tr, e.target ? `${e.target.type} ${e.target.id}` : '');
  cell(tr, req.method);
  cell(tr, req.route ? el('code', req.route) : '');
  cell(tr, req.status);
  cell(tr, e.count);
  cell(tr, req.ip);
  return tr;
}

/** Every entry matching the form's filters, as the route streams it for
 * `Accept: application/x-ndjson`, saved through a Blob and a temporary <a download>. */
async function exportAudit() {
  await task(async () => {
    const blob = await api('GET', 'auth/audit-log', { query: auditFilters(), accept: NDJSON });
    const text = await blob.text();
    const lines = text.split('\n').filter((l) => l.trim()).length;
    const href = URL.createObjectURL(new Blob([text], { type: NDJSON }));
    const a = el('a');
    a.href = href;
    a.download = `wfs-audit-log-${rfc3339(Date.now()).replace(/:/g, '-')}.ndjson`;
    a.hidden = true;
    document.body.append(a);
    a.click();
    a.remove();
    // Revoking at once can cancel the download in some browsers; give it a moment.
    setTimeout(() => URL.revokeObjectURL(href), 10 * 1000);
    setStatus(`Exported ${lines} ${lines === 1 ? 'entry' : 'entries'} as NDJSON.`);
  });
}

// ---------------------------------------------------------------- wiring

function on(id, type, fn) {
  byId(id).addEventListener(type, fn);
}

function init() {
  addCheckboxes('key-scopes', SCOPES, 'key-scope');
  addCheckboxes('endpoint-events', EVENT_TYPES, 'endpoint-event');
  byId('audit-actions').append(...AUDIT_ACTIONS.map((a) => { const o = el('option'); o.value = a; return o; }));

  on('signin-form', 'submit', onSignIn);
  on('signout', 'click', () => signOut());
  on('nav-keys', 'click', () => show('keys'));
  on('nav-webhooks', 'click', () => show('webhooks'));
  on('nav-audit', 'click', () => show('audit'));

  on('confirm-ok', 'click', () => byId('confirm-dialog').close('ok'));
  on('confirm-cancel', 'click', () => byId('confirm-dialog').close('cancel'));
  on('secret-copy', 'click', copySecret);
  on('secret-dismiss', 'click', () => dismissSecret());

  on('keys-refresh', 'click', () => task(loadKeys));
  on('key-create-form', 'submit', onCreateKey);

  on('endpoints-refresh', 'click', () => task(loadEndpoints));
  on('endpoint-create-form', 'submit', onEndpointSubmit);
  on('endpoint-edit-cancel', 'click', () => { endEdit(); focusHeading('endpoint-form-title'); });
  on('deliveries-status', 'change', () => task(() => loadDeliveries(null)));
  on('deliveries-refresh', 'click', () => task(() => loadDeliveries(session.deliveries && session.deliveries.cursor)));
  on('deliveries-next', 'click', () => task(() => loadDeliveries(session.deliveries.next)));
  on('deliveries-first', 'click', () => task(() => loadDeliveries(null)));
  on('deliveries-close', 'click', () => { closeDeliveries(); focusHeading('webhooks-title'); });
  on('replay-form', 'submit', onReplay);

  on('audit-filter-form', 'submit', (ev) => { ev.preventDefault(); task(() => loadAudit(null)); });
  on('audit-next', 'click', () => task(() => loadAudit(session.audit.next)));
  on('audit-first', 'click', () => task(() => loadAudit(null)));
  on('audit-export', 'click', exportAudit);

  // Leaving the page: the token is lost anyway, so revoke the console's key now.
  addEventListener('pagehide', () => { if (session) revokeHookKey(session); });

  document.body.dataset.state = 'signed-out';
  document.body.dataset.busy = '0';
}

init();
