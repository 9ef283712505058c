'use strict';
// Preloaded into the peers' load generator, unchanged and called by path:
//   node --require bench/shims/herald_loadgen.js ../shared/bench/peers/tools/loadgen.js --url ... --n N --c C
// so Herald is driven by the very client that drives the peers (same closed loop, same C keep-alive
// connections, same per-request latency and throughput bookkeeping, same payload bytes). Only the
// request's shape is adapted to Herald's API, just before each request is sent:
//   peer body  {url, method, tenant_id, idempotency_key, payload}
//   Herald     POST {url, payload} with `Authorization: Bearer <key of that tenant>` and
//              `Idempotency-Key: <idempotency_key>` (Herald delivers with POST; a tenant is its API key)
// loadgen.js picks one of 16 random tenant ids per request (i % 16); each distinct id is mapped, in the
// order first seen, to one of the keys in HERALD_BENCH_KEYS (a JSON list of 16 API keys).
// HERALD_BENCH_ACCEPTS (optional): file written at exit with one "job_id epoch_ms start_epoch_ms" line per
// 202: when its answer arrived (the accept side of the per-job accept-to-delivery latency) and when the
// request was started (so the harness can say which requests were the slowest: the first wave or later).
// HERALD_BENCH_HEADER (optional, WEBHOOK_HEADER=1): a custom header `Authorization: Bearer <that value>` in
// every webhook's body ({url, headers, payload}), for its receiver: Herald seals it at rest and opens it to call.
// HERALD_BENCH_EVENT_TYPE (optional, MODE=fanout): each request becomes an event instead, for POST /v1/events:
// {"event_type": <that type>, "event_id": <idempotency_key>, "payload": ...} (the event id de-duplicates it; no
// Idempotency-Key header), and each 202's accepts line names the event and the jobs it was fanned out to:
// "event_id epoch_ms start_epoch_ms job_id,job_id,...".
// Exports `reshape` for bench/shims/preload_cost.js, which checks it.
const http = require('http');
const fs = require('fs');
const { performance } = require('perf_hooks');

const keys = JSON.parse(fs.readFileSync(process.env.HERALD_BENCH_KEYS, 'utf8'));
if (!Array.isArray(keys) || keys.length === 0) throw new Error('HERALD_BENCH_KEYS: expected a JSON list of API keys');
const acceptsFile = process.env.HERALD_BENCH_ACCEPTS || '';
const headers = process.env.HERALD_BENCH_HEADER ? { Authorization: `Bearer ${process.env.HERALD_BENCH_HEADER}` } : null;
const headersField = headers ? `"headers":${JSON.stringify(headers)},` : '';
const eventType = process.env.HERALD_BENCH_EVENT_TYPE || '';
const keyOfTenant = new Map();
// The accepted requests, kept as raw values and formatted only at exit: the client is one process
// on a saturated machine, so what this preload spends per request is taken from the client itself.
const acceptedJobs = [];
const acceptedAt = [];
const startedAt = [];
const eventJobs = []; // MODE=fanout: per accepted event, its job ids joined by commas

function keyFor(tenantId) {
  let key = keyOfTenant.get(tenantId);
  if (key === undefined) {
    key = keys[keyOfTenant.size % keys.length];
    keyOfTenant.set(tenantId, key);
  }
  return key;
}

// loadgen.js's body is JSON.stringify({url, method, tenant_id, idempotency_key, payload}); Herald's is
// {url, payload}, the same bytes less the middle three fields. Cut out by position (a few string
// searches instead of a parse and a stringify per request); any other shape is parsed.
const TENANT = '"tenant_id":"';
const KEY = '"idempotency_key":"';
function reshape(peerBody) {
  const method = peerBody.startsWith('{"url":"') ? peerBody.indexOf('","method":') : -1;
  const tenant = method < 0 ? -1 : peerBody.indexOf(TENANT, method);
  const key = tenant < 0 ? -1 : peerBody.indexOf(KEY, tenant);
  const payload = key < 0 ? -1 : peerBody.indexOf('","payload":', key);
  if (eventType) return asEvent(payload < 0 ? JSON.parse(peerBody) : null, peerBody, tenant, key, payload);
  if (payload < 0) {
    const peer = JSON.parse(peerBody);
    const body = headers ? { url: peer.url, headers, payload: peer.payload } : { url: peer.url, payload: peer.payload };
    return { body: JSON.stringify(body), tenantId: peer.tenant_id, idempotencyKey: peer.idempotency_key };
  }
  return {
    body: peerBody.slice(0, method + 2) + headersField + peerBody.slice(payload + 2),
    tenantId: peerBody.slice(tenant + TENANT.length, peerBody.indexOf('"', tenant + TENANT.length)),
    idempotencyKey: peerBody.slice(key + KEY.length, payload),
  };
}

// MODE=fanout: the same payload bytes as an event of HERALD_BENCH_EVENT_TYPE, its event id the request's key.
function asEvent(peer, peerBody, tenant, key, payload) {
  if (peer) {
    const body = { event_type: eventType, event_id: peer.idempotency_key, payload: peer.payload };
    return { body: JSON.stringify(body), tenantId: peer.tenant_id, idempotencyKey: '' };
  }
  const eventId = peerBody.slice(key + KEY.length, payload);
  return {
    body: `{"event_type":${JSON.stringify(eventType)},"event_id":"${eventId}",${peerBody.slice(payload + 2)}`,
    tenantId: peerBody.slice(tenant + TENANT.length, peerBody.indexOf('"', tenant + TENANT.length)),
    idempotencyKey: '',
  };
}

function location(res) {
  const raw = res.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].length === 8 && raw[i].toLowerCase() === 'location') return raw[i + 1];
  }
  return '';
}

const realRequest = http.request;
http.request = function heraldRequest(options, callback) {
  const started = performance.now();
  const onResponse = acceptsFile
    ? (res) => {
        // MODE=fanout: the answer names the event and its deliveries' jobs.
        const chunks = eventType ? [] : null;
        if (chunks) res.on('data', (chunk) => chunks.push(chunk));
        // Registered before loadgen.js's own listeners, so it runs first on the same event.
        res.once('end', () => {
          if (res.statusCode !== 202) return;
          const at = performance.now();
          if (chunks) {
            const answer = JSON.parse(Buffer.concat(chunks).toString());
            acceptedJobs.push(answer.event_id);
            acceptedAt.push(at);
            startedAt.push(started);
            eventJobs.push(answer.deliveries.map((d) => d.job_id).join(','));
            return;
          }
          const where = location(res);
          if (!where) return; // counted as ok by loadgen; no job to name
          acceptedJobs.push(where);
          acceptedAt.push(at);
          startedAt.push(started);
        });
        if (callback) callback(res);
      }
    : callback;
  const req = realRequest.call(http, options, onResponse);
  const realEnd = req.end;
  req.end = function heraldEnd(body, ...rest) {
    if (typeof body === 'string' && body.length > 0) {
      const herald = reshape(body);
      this.setHeader('content-length', Buffer.byteLength(herald.body));
      this.setHeader('authorization', `Bearer ${keyFor(herald.tenantId)}`);
      if (herald.idempotencyKey) this.setHeader('idempotency-key', herald.idempotencyKey);
      return realEnd.call(this, herald.body, ...rest);
    }
    return realEnd.call(this, body, ...rest);
  };
  return req;
};

process.on('exit', () => {
  if (!acceptsFile) return;
  const origin = performance.timeOrigin;
  const lines = acceptedJobs.map(
    (where, i) =>
      `${where.slice(where.lastIndexOf('/') + 1)} ${(origin + acceptedAt[i]).toFixed(3)} ${(origin + startedAt[i]).toFixed(3)}` +
      `${eventType ? ` ${eventJobs[i]}` : ''}\n`,
  );
  fs.writeFileSync(acceptsFile, lines.join(''));
});

module.exports = { reshape };
