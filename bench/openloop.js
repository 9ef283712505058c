'use strict';
// Open-loop load generator: request i is due at t0 + i/rate, sent when it is due whatever the
// answers before it did, and its latency is counted from when it was due. A request that waits
// for a free connection (all C keep-alive connections busy: the agent queues it) counts that wait,
// so a server that falls behind shows in the latencies instead of slowing the client down (as a
// closed loop does, which hides the queue). Takes loadgen.js's arguments and prints its summary
// line (the same fields), so it serves as the peers' LOADGEN_JS (run.sh) and drives Herald too
// (with bench/shims/herald_loadgen.js preloaded, as loadgen.js is):
//   LOADGEN_RATE=200 node bench/openloop.js --url http://127.0.0.1:8000/v1/webhooks --n 4000 --c 64 \
//     --hook http://127.0.0.1:7070/hook [--tenants 16] [--run-id X] [--rate 200]
// The rate comes from --rate or LOADGEN_RATE (run.sh passes only loadgen.js's arguments); none: 200/s.
// LOADGEN_ACCEPTS (optional): file written at exit with one "job_id accept_epoch_ms due_epoch_ms" line
// per 2xx answer whose body names the job ({"id": ...}, as Herald's and the peers' APIs answer): the
// accept side of the per-job accept-to-delivery latency.
// Extra summary fields: rate, late_sends (requests sent more than 10 ms after they were due: the
// client itself fell behind, which would understate the load), send_lag_p99_ms.
// LOADGEN_WARM_S (default 3): before t0 the client sends the same requests at the same rate for this
// long to a server of its own in this process, answered at once and counted nowhere. A fresh Node
// process takes 0.1-0.25 of a core more for its first 3-4 s at 600/s while it compiles (measured
// against a bare server: 0.34, 0.25, 0.22, 0.15, then 0.10 core); on a 2-core machine loaded by the
// system under test, that fell on the first seconds of the measure, whichever system it was.
const http = require('http');
const crypto = require('crypto');
const fs = require('fs');
const { performance } = require('perf_hooks');

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
const target = new URL(args.url);
const N = Number(args.n || 5000);
const C = Number(args.c || 64);
const RATE = Number(args.rate || process.env.LOADGEN_RATE || 200);
const hook = args.hook || 'http://127.0.0.1:7070/hook';
const runId = args['run-id'] || crypto.randomBytes(4).toString('hex');
const tenants = Array.from({ length: Number(args.tenants || 16) }, () => crypto.randomUUID());
const acceptsFile = process.env.LOADGEN_ACCEPTS || '';
const WARM_S = Number(process.env.LOADGEN_WARM_S ?? 3);

const agent = new http.Agent({ keepAlive: true, maxSockets: C, maxFreeSockets: C });
const lat = new Float64Array(N);
const sendLag = new Float64Array(N);
const statusCounts = {};
let ok = 0, errors = 0, done = 0, late = 0;
let firstAcceptMs = null, lastAcceptMs = null;
const acceptedJobs = [], acceptedAt = [], dueAt = [];

// The same request as loadgen.js's (bytes, tenants, idempotency keys), so both clients load alike.
function body(i) {
  return JSON.stringify({
    url: hook,
    method: 'POST',
    tenant_id: tenants[i % tenants.length],
    idempotency_key: `${runId}-${i}`,
    payload: {
      event: 'order.created',
      seq: i,
      data: { order_id: `ord_${runId}_${i}`, amount: 4999, currency: 'USD',
              customer: { id: `cus_${i % 997}`, email: `user${i % 997}@example.com` },
              items: [{ sku: 'SKU-1', qty: 1 }, { sku: 'SKU-2', qty: 2 }] },
    },
  });
}

let finish;
const finished = new Promise((resolve) => { finish = resolve; });

function settle() {
  if (++done === N) finish();
}

// `to`: the measured target, or the warm-up's own server (then nothing is counted).
function one(i, due, to = target, via = agent) {
  const warming = to !== target;
  const b = body(i);
  if (!warming) {
    sendLag[i] = performance.now() - due;
    if (sendLag[i] > 10) late++;
  }
  const req = http.request({
    agent: via, host: to.hostname, port: to.port, path: to.pathname, method: 'POST',
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(b) },
  }, (res) => {
    const chunks = acceptsFile ? [] : null;
    res.on('data', (chunk) => { if (chunks) chunks.push(chunk); });
    res.on('end', () => {
      if (warming) return;
      const t1 = performance.now();
      lat[i] = t1 - due;
      statusCounts[res.statusCode] = (statusCounts[res.statusCode] || 0) + 1;
      if (res.statusCode >= 200 && res.statusCode < 300) {
        ok++;
        const e = performance.timeOrigin + t1;
        if (firstAcceptMs === null) firstAcceptMs = e;
        lastAcceptMs = e;
        if (chunks) {
          try {
            const id = JSON.parse(Buffer.concat(chunks).toString()).id;
            if (id !== undefined) { acceptedJobs.push(String(id)); acceptedAt.push(t1); dueAt.push(due); }
          } catch (_) { /* an answer without a JSON body names no job */ }
        }
      } else errors++;
      settle();
    });
  });
  req.on('error', (err) => {
    if (warming) return;
    lat[i] = performance.now() - due;
    statusCounts[err.code || 'ERR'] = (statusCounts[err.code || 'ERR'] || 0) + 1;
    errors++;
    settle();
  });
  req.end(b);
}

// Requests 0..count-1 on the schedule t0 + i/RATE, each by `send(i, due)`. Every request that is
// due is sent at once; then sleep until the next one is due (timers are coarse, ~1 ms: a request
// is sent at most that late, and the lag is reported).
function schedule(count, send) {
  const t0 = performance.now();
  let next = 0;
  return new Promise((resolve) => {
    const tick = () => {
      const now = performance.now();
      while (next < count && t0 + (next * 1000) / RATE <= now) {
        send(next, t0 + (next * 1000) / RATE);
        next++;
      }
      if (next >= count) return resolve();
      setTimeout(tick, Math.max(0, t0 + (next * 1000) / RATE - performance.now()));
    };
    tick();
  });
}

// The warm-up: WARM_S of requests to a server in this process that answers as the APIs do.
async function warmUp() {
  const count = Math.round(WARM_S * RATE);
  if (count <= 0) return;
  let answered = 0;
  let allAnswered;
  const done = new Promise((resolve) => { allAnswered = resolve; });
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(202, { 'content-type': 'application/json' });
      res.end('{}', () => { if (++answered === count) allAnswered(); });
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const local = new URL(`http://127.0.0.1:${server.address().port}${target.pathname}`);
  const localAgent = new http.Agent({ keepAlive: true, maxSockets: C, maxFreeSockets: C });
  await schedule(count, (i, due) => one(i, due, local, localAgent));
  await done;
  localAgent.destroy();
  server.close();
}

(async () => {
  await warmUp();
  const startMs = performance.timeOrigin + performance.now();
  const t0 = performance.now();
  await schedule(N, one);
  await finished;
  const dur = (performance.now() - t0) / 1000;
  const s = Array.from(lat).sort((a, b) => a - b);
  const pct = (xs, p) => xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
  const lag = Array.from(sendLag).sort((a, b) => a - b);
  const out = {
    n: N, c: C, ok, errors, status: statusCounts, run_id: runId,
    duration_s: +dur.toFixed(3), rps: +(N / dur).toFixed(1),
    p50_ms: +pct(s, 50).toFixed(2), p90_ms: +pct(s, 90).toFixed(2), p99_ms: +pct(s, 99).toFixed(2),
    max_ms: +s[s.length - 1].toFixed(2), mean_ms: +(s.reduce((a, b) => a + b, 0) / N).toFixed(2),
    loadgen_cpu_s: +((process.cpuUsage().user + process.cpuUsage().system) / 1e6).toFixed(2),
    start_ms: startMs, first_accept_ms: firstAcceptMs, last_accept_ms: lastAcceptMs,
    rate: RATE, late_sends: late, send_lag_p99_ms: +pct(lag, 99).toFixed(2),
  };
  if (acceptsFile) {
    const origin = performance.timeOrigin;
    fs.writeFileSync(acceptsFile, acceptedJobs.map(
      (id, k) => `${id} ${(origin + acceptedAt[k]).toFixed(3)} ${(origin + dueAt[k]).toFixed(3)}\n`).join(''));
  }
  process.stdout.write(JSON.stringify(out) + '\n');
  agent.destroy();
})();
