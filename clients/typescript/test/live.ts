// The TypeScript SDK against a live stack (run by tests/test_typescript_sdk.py with GATEWAY and
// API_KEY set): a webhook sent and read back delivered, its signatures verified both ways; a
// target, a filter and a subscription, an event fanned out and verified with the target's own
// secret (and not the tenant's), that secret rotated and a test ping; a refusal thrown with
// its problem; a caller's Idempotency-Key honoured; 429 retried with one key. Prints what it saw.
import assert from "node:assert/strict";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { Herald, HeraldApiError, verify, verifyStandard, WebhookVerificationError } from "../src/index.ts";

interface Arrival {
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

async function listen(status: number, extra: Record<string, string> = {}) {
  const arrivals: Arrival[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      arrivals.push({ path: request.url ?? "", headers: request.headers, body: Buffer.concat(chunks) });
      response.writeHead(status, { "content-type": "application/problem+json", ...extra });
      response.end(JSON.stringify({ title: "scripted", status, detail: "later" }));
    });
  });
  await new Promise<void>((ready) => server.listen(0, "127.0.0.1", ready));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, arrivals, server };
}

async function delivered(herald: Herald, id: string) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const job = await herald.jobs.get(id);
    if (job.status === "delivered") return job;
    assert.ok(!["failed", "cancelled"].includes(job.status) && Date.now() < deadline, JSON.stringify(job));
    await new Promise((done) => setTimeout(done, 200));
  }
}

const herald = new Herald({ apiKey: process.env.API_KEY ?? "", baseUrl: process.env.GATEWAY });
const receiver = await listen(200);
const seen: Record<string, unknown> = {};
try {
  const { secret } = await herald.secrets.create();
  seen.secret = secret;
  const job = await herald.webhooks.send({ url: `${receiver.url}/hook`, payload: { hello: "typescript" } });
  assert.equal((await delivered(herald, job.id)).attempt_count, 1);
  const arrival = receiver.arrivals.find((a) => a.headers["webhook-id"] === job.id);
  assert.ok(arrival);
  assert.deepEqual(JSON.parse(arrival.body.toString()), { hello: "typescript" });
  verify(secret, arrival.body, arrival.headers);
  assert.equal(verifyStandard(secret, arrival.body, arrival.headers), job.id);
  assert.ok((await herald.jobs.list({ limit: 50 })).data.some((j) => j.id === job.id));
  seen.webhook = job.id;

  const target = await herald.targets.create({ url: `${receiver.url}/orders`, max_in_flight: 4 });
  assert.equal(target.max_in_flight, 4);
  // The target signs with its own secret; the tenant's signs only webhooks sent to a URL.
  const { key } = await herald.targets.secret(target.id);
  assert.ok(key.startsWith("whsec_") && key !== secret);
  const filter = await herald.filters.create({ event_types: ["orders.*"] });
  const subscription = await herald.subscriptions.create({ target_id: target.id, filter_id: filter.id });
  assert.equal((await herald.subscriptions.get(subscription.id)).target_id, target.id);
  const event = await herald.events.publish({ event_type: "orders.created.v1", payload: { order_id: 7 } });
  const fanned = event.deliveries[0].job_id;
  await delivered(herald, fanned);
  const order = receiver.arrivals.find((a) => a.headers["webhook-id"] === fanned);
  assert.ok(order && order.path === "/orders");
  verify(key, order.body, order.headers);
  assert.equal(verifyStandard(key, order.body, order.headers), fanned);
  assert.throws(() => verify(secret, order.body, order.headers), WebhookVerificationError);
  assert.throws(() => verifyStandard(secret, order.body, order.headers), WebhookVerificationError);
  seen.event = fanned;

  // Rotated at once: the new key is the one read back, and a test ping is signed with it.
  const rotated = await herald.targets.rotateSecret(target.id, { overlap_s: 0 });
  assert.equal((await herald.targets.secret(target.id)).key, rotated.key);
  const ping = await herald.targets.test(target.id);
  assert.equal(ping.status_code, 200);
  const pinged = receiver.arrivals.find((a) => a.headers["webhook-id"] === ping.ping_id);
  assert.ok(pinged);
  assert.equal(verifyStandard(rotated.key, pinged.body, pinged.headers), ping.ping_id);
  assert.throws(() => verifyStandard(key, pinged.body, pinged.headers), WebhookVerificationError);
  seen.ping = ping.ping_id;

  await assert.rejects(herald.webhooks.send({ url: "not a url", payload: 1 }), (error: unknown) => {
    assert.ok(error instanceof HeraldApiError && error.status === 422);
    assert.equal(error.problem.errors?.[0]?.field, "url");
    return true;
  });
  const first = await herald.webhooks.send({ url: `${receiver.url}/once`, payload: 1, idempotencyKey: "ts-1" });
  const again = await herald.webhooks.send({ url: `${receiver.url}/once`, payload: 1, idempotencyKey: "ts-1" });
  assert.equal(again.id, first.id);

  const busy = await listen(429, { "retry-after": "0" });
  const scripted = new Herald({ apiKey: "hk_test", baseUrl: busy.url, retry: { maxRetries: 2, backoffMs: 1 } });
  await assert.rejects(scripted.webhooks.send({ url: "https://example.com/hook", payload: {} }), HeraldApiError);
  const keys = new Set(busy.arrivals.map((a) => a.headers["idempotency-key"]));
  assert.equal(busy.arrivals.length, 3);
  assert.equal(keys.size, 1);
  busy.server.close();
  seen.retried = busy.arrivals.length;
  console.log(JSON.stringify({ ok: true, ...seen, secret: undefined }));
} finally {
  receiver.server.close();
}
