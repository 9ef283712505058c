'use strict';
// Preloaded into the peers' sink, unchanged and called by path:
//   SINK_PORT=P node --require bench/shims/sink_webhook_id.js ../shared/bench/peers/sink/sink.js
// The sink counts unique deliveries by the `x-job-id` header, which the peers' workers set to their job
// id. Herald sends its job id as `webhook-id` (Standard Webhooks); this shim presents that value as
// `x-job-id` when the request carries none, so the sink counts unique Herald job ids, duplicates and the
// time of the N-th unique delivery exactly as it does for the peers.
// It also keeps the arrival time of each job id's first delivery (same clock and the same moment the
// sink takes its own timestamp), served at GET /bench/arrivals as {"<job id>": epoch_ms, ...} and
// cleared by the sink's own POST /reset: the delivery side of the per-job accept-to-delivery latency.
const http = require('http');
const { performance } = require('perf_hooks');

const nowMs = () => performance.timeOrigin + performance.now();
let arrivals = new Map();

const realCreateServer = http.createServer;
http.createServer = function heraldSink(...args) {
  const handler = args.pop();
  return realCreateServer.call(http, ...args, (req, res) => {
    if (req.method === 'POST' && req.url.startsWith('/hook')) {
      const id = req.headers['webhook-id'];
      if (id !== undefined && req.headers['x-job-id'] === undefined) req.headers['x-job-id'] = id;
      if (id !== undefined) {
        req.on('end', () => { if (!arrivals.has(id)) arrivals.set(id, nowMs()); });
      }
    } else if (req.method === 'GET' && req.url.startsWith('/bench/arrivals')) {
      const body = JSON.stringify(Object.fromEntries(arrivals));
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
      return;
    } else if (req.method === 'POST' && req.url.startsWith('/reset')) {
      arrivals = new Map();
    }
    handler(req, res);
  });
};
