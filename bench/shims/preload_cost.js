'use strict';
// What the load generator's preload (herald_loadgen.js) costs the client, per request:
//   node bench/shims/preload_cost.js [--peers ../shared/bench/peers] [--n 20000] [--rounds 5]
// The peers' loadgen.js is run against a local server that answers as Herald's gateway does (202, the
// same headers and body), alternately without the preload (as it drives the peers), with the preload
// (as it drives Herald: reshaped requests, and each 202 kept for accepts.txt) and, with --base FILE,
// with another version of the preload. It prints the client's CPU per request (loadgen.js's own
// `loadgen_cpu_s`, startup included) and the medians. The client is one process on a machine the run
// saturates, so what the preload spends is taken from the client: it must stay small beside it.
// First it checks that the preload's reshaped body is the very JSON a parse and a stringify would give.
const { spawn, execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const http = require('http');
const crypto = require('crypto');

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
const root = path.resolve(__dirname, '..', '..');
const peers = path.resolve(root, args.peers || '../shared/bench/peers');
const loadgen = path.join(peers, 'tools', 'loadgen.js');
const preload = path.join(__dirname, 'herald_loadgen.js');
const N = Number(args.n || 20000);
const ROUNDS = Number(args.rounds || 5);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'preload-cost-'));
const keysFile = path.join(dir, 'keys.json');
fs.writeFileSync(keysFile, JSON.stringify(Array.from({ length: 16 }, (_, i) => `key${i}`)));

function checkReshape() {
  process.env.HERALD_BENCH_KEYS = keysFile;
  // Loading the preload replaces http.request in this process too; only its reshape is wanted here.
  const realRequest = http.request;
  const { reshape } = require(preload);
  http.request = realRequest;
  for (let i = 0; i < 1000; i++) {
    const tenant = crypto.randomUUID();
    const payload = { event: 'order.created', seq: i, data: { note: 'a "quoted","payload":1 value' } };
    const peer = JSON.stringify({ url: 'http://127.0.0.1:7070/hook', method: 'POST', tenant_id: tenant, idempotency_key: `r-${i}`, payload });
    const got = reshape(peer);
    if (got.body !== JSON.stringify({ url: 'http://127.0.0.1:7070/hook', payload }) || got.tenantId !== tenant || got.idempotencyKey !== `r-${i}`) {
      throw new Error(`reshape differs from parse + stringify for ${peer}`);
    }
  }
}

function server() {
  let n = 0;
  const s = http.createServer((req, res) => {
    req.on('data', () => {});
    req.on('end', () => {
      n++;
      const id = `01a24795-182d-77be-a390-${String(n).padStart(12, '0')}`;
      const body = JSON.stringify({ id, status: 'queued' });
      res.writeHead(202, {
        'content-length': Buffer.byteLength(body), 'content-type': 'application/json', location: `/v1/jobs/${id}`,
        'ratelimit-limit': '1000000', 'ratelimit-remaining': '999999', 'ratelimit-reset': '61',
      });
      res.end(body);
    });
  });
  return new Promise((resolve) => s.listen(0, '127.0.0.1', () => resolve(s)));
}

function run(port, withPreload) {
  const cmd = [...(withPreload ? ['--require', withPreload] : []), loadgen,
    '--url', `http://127.0.0.1:${port}/v1/webhooks`, '--n', String(N), '--c', '64', '--hook', 'http://127.0.0.1:7070/hook'];
  const env = { ...process.env, HERALD_BENCH_KEYS: keysFile, HERALD_BENCH_ACCEPTS: path.join(dir, 'accepts.txt') };
  const out = JSON.parse(execFileSync(process.execPath, cmd, { env }).toString());
  if (out.ok !== N) throw new Error(`only ${out.ok} of ${N} accepted`);
  return (out.loadgen_cpu_s * 1e6) / N;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

(async () => {
  // The server runs in a child, so its CPU is not the client's and the two use both cores.
  if (args.serve) { const s = await server(); process.stdout.write(`${s.address().port}\n`); return; }
  checkReshape();
  const child = spawn(process.execPath, [__filename, '--serve', '1'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise((resolve) => child.stdout.once('data', (d) => resolve(Number(String(d).trim()))));
  const sides = { 'no preload (the peers)': null, 'the preload (Herald)': preload };
  if (args.base) sides[`the preload at ${args.base}`] = path.resolve(args.base);
  const cost = Object.fromEntries(Object.keys(sides).map((k) => [k, []]));
  try {
    for (let r = 0; r < ROUNDS; r++) {
      for (const [name, file] of Object.entries(sides)) cost[name].push(run(port, file));
    }
  } finally {
    child.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  console.log(`client CPU per request, µs (loadgen.js, N=${N}, C=64, ${ROUNDS} rounds; ${os.cpus()[0].model})`);
  const plain = median(cost['no preload (the peers)']);
  for (const [name, xs] of Object.entries(cost)) {
    const m = median(xs);
    const more = m - plain;
    console.log(`${name.padEnd(40)} median ${m.toFixed(1).padStart(6)}  (${more >= 0 ? '+' : ''}${more.toFixed(1)})  rounds ${xs.map((x) => x.toFixed(1)).join(' ')}`);
  }
})();
