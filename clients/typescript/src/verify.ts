// Receiver-side verification of what Herald delivers, both schemes: Herald's own
// X-Webhook-Timestamp / X-Webhook-Signature (hex HMAC-SHA256 of "{timestamp}.{body}", keyed by
// the secret string) and the Standard Webhooks headers, through the official `standardwebhooks`.
import { createHmac, timingSafeEqual } from "node:crypto";
import { Webhook } from "standardwebhooks";

export const DEFAULT_TOLERANCE_S = 300;

export class WebhookVerificationError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = "WebhookVerificationError";
  }
}

type Headers = Record<string, string | string[] | undefined> | globalThis.Headers;

function header(headers: Headers, name: string): string | undefined {
  if (headers instanceof globalThis.Headers) return headers.get(name) ?? undefined;
  const found = Object.entries(headers).find(([key]) => key.toLowerCase() === name);
  const value = found?.[1];
  return Array.isArray(value) ? value[0] : value;
}

/** Checks Herald's own signature over the raw body; `secret` one or several (while rotating). */
export function verify(
  secret: string | string[],
  body: string | Uint8Array,
  headers: Headers,
  toleranceS = DEFAULT_TOLERANCE_S,
): void {
  const timestamp = header(headers, "x-webhook-timestamp");
  const signatures = header(headers, "x-webhook-signature");
  if (!timestamp || !signatures) throw new WebhookVerificationError("missing X-Webhook-Timestamp or X-Webhook-Signature");
  if (!/^\d+$/.test(timestamp) || Math.abs(Date.now() / 1000 - Number(timestamp)) > toleranceS) {
    throw new WebhookVerificationError("timestamp outside the tolerance");
  }
  const raw = typeof body === "string" ? Buffer.from(body) : Buffer.from(body);
  const signed = Buffer.concat([Buffer.from(`${timestamp}.`), raw]);
  const given = signatures.split(",").map((s) => s.trim());
  for (const key of Array.isArray(secret) ? secret : [secret]) {
    const expected = Buffer.from(createHmac("sha256", key).update(signed).digest("hex"));
    if (given.some((g) => g.length === expected.length && timingSafeEqual(Buffer.from(g), expected))) return;
  }
  throw new WebhookVerificationError("no signature matches");
}

/** Checks the Standard Webhooks headers; returns the signed `webhook-id` (safe to de-duplicate on). */
export function verifyStandard(secret: string, body: string | Uint8Array, headers: Headers): string {
  const id = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  const signature = header(headers, "webhook-signature");
  if (!id || !timestamp || !signature) throw new WebhookVerificationError("missing Standard Webhooks headers");
  const text = typeof body === "string" ? body : Buffer.from(body).toString("utf8");
  try {
    new Webhook(secret).verify(text, { "webhook-id": id, "webhook-timestamp": timestamp, "webhook-signature": signature });
  } catch (error) {
    throw new WebhookVerificationError(String(error));
  }
  return id;
}
