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
const http = require('http');
const fs = require('fs');
const { performance } = require('perf_hooks');

const keys = JSON.parse(fs.readFileSync(process.env.HERALD_BENCH_KEYS, 'utf8'));
if (!Array.isArray(keys) || keys.length === 0) throw new Error('HERALD_BENCH_KEYS: expected a JSON list of API keys');
const acceptsFile = process.env.HERALD_BENCH_ACCEPTS || '';
const keyOfTenant = new Map();
const accepts = [];

function keyFor(tenantId) {
  let key = keyOfTenant.get(tenantId);
  if (key === undefined) {
    key = keys[keyOfTenant.size % keys.length];
    keyOfTenant.set(tenantId, key);
  }
  return key;
}

const realRequest = http.request;
http.request = function heraldRequest(options, callback) {
  const started = performance.timeOrigin + performance.now();
  const onResponse = (res) => {
    if (acceptsFile) {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        if (res.statusCode !== 202) return;
        const t = performance.timeOrigin + performance.now();
        try { accepts.push(`${JSON.parse(Buffer.concat(chunks).toString()).id} ${t.toFixed(3)} ${started.toFixed(3)}`); } catch (_) { /* counted as ok by loadgen; no id */ }
      });
    }
    if (callback) callback(res);
  };
  const req = realRequest.call(http, options, onResponse);
  const realEnd = req.end;
  req.end = function heraldEnd(body, ...rest) {
    if (typeof body === 'string' && body.length > 0) {
      const peer = JSON.parse(body);
      const herald = JSON.stringify({ url: peer.url, payload: peer.payload });
      this.setHeader('content-length', Buffer.byteLength(herald));
      this.setHeader('authorization', `Bearer ${keyFor(peer.tenant_id)}`);
      if (peer.idempotency_key) this.setHeader('idempotency-key', peer.idempotency_key);
      return realEnd.call(this, herald, ...rest);
    }
    return realEnd.call(this, body, ...rest);
  };
  return req;
};

process.on('exit', () => {
  if (acceptsFile) fs.writeFileSync(acceptsFile, accepts.join('\n') + (accepts.length ? '\n' : ''));
});
