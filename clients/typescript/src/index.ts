// Herald's TypeScript SDK: the API over openapi-fetch, typed by `schema.ts`, which
// openapi-typescript generates from ../openapi.json (the gateway's document the SDKs are built
// from; `npm run generate` refreshes it, and the suite fails while it is not the gateway's).
// Every POST carries an Idempotency-Key (yours, or a new one its retries reuse); 429 and 503
// are retried as Retry-After says; a refusal throws a HeraldApiError carrying the problem details.
import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./schema.ts";

export { verify, verifyStandard, WebhookVerificationError } from "./verify.ts";
export type { components, paths };

type Schemas = components["schemas"];
export type JobAccepted = Schemas["JobAccepted"];
export type Job = Schemas["JobOut"];
export type Target = Schemas["TargetOut"];
export type TargetSecret = Schemas["TargetSecretOut"];
export type RotatedSecret = Schemas["RotatedSecretOut"];
export type TargetTest = Schemas["TargetTestOut"];
export type Filter = Schemas["FilterOut"];
export type Subscription = Schemas["SubscriptionOut"];
export type EventAccepted = Schemas["EventAccepted"];
export type SigningSecret = Schemas["WebhookSecretCreated"];
export type SecretStatus = Schemas["WebhookSecretStatusOut"];
export type ApiKey = Schemas["ApiKeyOut"];
export type CreatedApiKey = Schemas["ApiKeyCreated"];
export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

/** RFC 9457 problem details, as the gateway sends them. */
export interface Problem {
  type?: string;
  title?: string;
  status?: number;
  detail?: string;
  errors?: { field: string; detail: string }[];
  [extra: string]: unknown;
}

/** The gateway refused the request: `status`, and its `problem` as sent. */
export class HeraldApiError extends Error {
  readonly status: number;
  readonly problem: Problem;
  readonly retryAfter: number | null;

  constructor(status: number, problem: Problem, retryAfter: number | null) {
    super(`${status} ${problem.title ?? ""}: ${problem.detail ?? ""}`);
    this.name = "HeraldApiError";
    this.status = status;
    this.problem = problem;
    this.retryAfter = retryAfter;
  }
}

export interface RetryPolicy {
  /** More tries after the first, on 429, 503 or a network failure. */
  maxRetries: number;
  backoffMs: number;
  maxWaitMs: number;
}

export interface HeraldOptions {
  apiKey: string;
  baseUrl?: string;
  retry?: Partial<RetryPolicy>;
  /** The fetch to send with (the global one by default). */
  fetch?: typeof fetch;
}

const RETRIED = new Set([429, 503]);

export function retryAfterMs(response: Response): number | null {
  const value = response.headers.get("retry-after");
  if (!value) return null;
  const seconds = Number(value);
  if (!Number.isNaN(seconds)) return Math.max(seconds * 1000, 0);
  const when = Date.parse(value);
  return Number.isNaN(when) ? null : Math.max(when - Date.now(), 0);
}

/** A fetch that retries what is worth retrying, each try a copy of the same request (same key). */
function retrying(send: typeof fetch, policy: RetryPolicy): typeof fetch {
  const wait = (attempt: number, response: Response | null) => {
    const said = response ? retryAfterMs(response) : null;
    const backoff = policy.backoffMs * 2 ** attempt * (0.5 + Math.random() / 2);
    return new Promise((done) => setTimeout(done, Math.min(said ?? backoff, policy.maxWaitMs)));
  };
  return async (input, init) => {
    const request = new Request(input, init);
    for (let attempt = 0; ; attempt++) {
      let response: Response;
      try {
        response = await send(request.clone());
      } catch (error) {
        if (attempt >= policy.maxRetries) throw error;
        await wait(attempt, null);
        continue;
      }
      if (!RETRIED.has(response.status) || attempt >= policy.maxRetries) return response;
      await wait(attempt, response);
    }
  };
}

async function answer<T>(call: Promise<{ data?: unknown; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) {
    const problem: Problem =
      error && typeof error === "object" ? (error as Problem) : { status: response.status, detail: String(error ?? "") };
    throw new HeraldApiError(response.status, problem, retryAfterMs(response));
  }
  return data as T;
}

/** A tenant's client: `new Herald({ apiKey: "hk_live_...", baseUrl: "http://127.0.0.1:8080" })`. */
export class Herald {
  readonly api: Client<paths>;

  constructor(options: HeraldOptions) {
    const policy: RetryPolicy = { maxRetries: 3, backoffMs: 500, maxWaitMs: 30_000, ...options.retry };
    this.api = createClient<paths>({
      baseUrl: options.baseUrl ?? "http://127.0.0.1:8080",
      fetch: retrying(options.fetch ?? fetch, policy),
      headers: { authorization: `Bearer ${options.apiKey}`, "user-agent": "herald-client-typescript/0.1.0" },
    });
    this.api.use({
      onRequest({ request }) {
        if (request.method === "POST" && !request.headers.has("idempotency-key")) {
          request.headers.set("idempotency-key", crypto.randomUUID());
        }
        return request;
      },
    });
  }

  private key(idempotencyKey?: string) {
    return idempotencyKey ? { "idempotency-key": idempotencyKey } : {};
  }

  readonly webhooks = {
    send: (body: Schemas["WebhookIn"] & { idempotencyKey?: string }): Promise<JobAccepted> => {
      const { idempotencyKey, ...webhook } = body;
      return answer(this.api.POST("/v1/webhooks", { body: webhook, headers: this.key(idempotencyKey) }));
    },
  };

  readonly jobs = {
    get: (id: string): Promise<Job> => answer(this.api.GET("/v1/jobs/{job_id}", { params: { path: { job_id: id } } })),
    list: (query: paths["/v1/jobs"]["get"]["parameters"]["query"] = {}): Promise<Page<Job>> =>
      answer(this.api.GET("/v1/jobs", { params: { query } })),
    retry: (id: string): Promise<JobAccepted> =>
      answer(this.api.POST("/v1/jobs/{job_id}/retry", { params: { path: { job_id: id } } })),
  };

  readonly events = {
    publish: (body: Schemas["EventIn"] & { idempotencyKey?: string }): Promise<EventAccepted> => {
      const { idempotencyKey, ...event } = body;
      return answer(this.api.POST("/v1/events", { body: event, headers: this.key(idempotencyKey) }));
    },
  };

  readonly targets = {
    create: (body: Schemas["TargetIn"]): Promise<Target> => answer(this.api.POST("/v1/webhooks/targets", { body })),
    get: (id: string): Promise<Target> =>
      answer(this.api.GET("/v1/webhooks/targets/{target_id}", { params: { path: { target_id: id } } })),
    list: (): Promise<Page<Target>> => answer(this.api.GET("/v1/webhooks/targets", {})),
    update: (id: string, body: Schemas["TargetPatch"]): Promise<Target> =>
      answer(this.api.PATCH("/v1/webhooks/targets/{target_id}", { params: { path: { target_id: id } }, body })),
    delete: (id: string): Promise<void> =>
      answer(this.api.DELETE("/v1/webhooks/targets/{target_id}", { params: { path: { target_id: id } } })),
    /** The target's own signing secret: its deliveries are signed with it, not the tenant's. */
    secret: (id: string): Promise<TargetSecret> =>
      answer(this.api.GET("/v1/webhooks/targets/{target_id}/secret", { params: { path: { target_id: id } } })),
    /** A new key (given, or made; `algorithm: "ed25519"` for a key pair), the previous ones
     * still signing for `overlap_s` seconds (the gateway's default: a day). */
    rotateSecret: (id: string, body: Schemas["RotateSecretIn"] = {}): Promise<RotatedSecret> =>
      answer(
        this.api.POST("/v1/webhooks/targets/{target_id}/secret/rotate", { params: { path: { target_id: id } }, body }),
      ),
    /** Sends the target a signed ping now; answers what its receiver said. */
    test: (id: string): Promise<TargetTest> =>
      answer(this.api.POST("/v1/webhooks/targets/{target_id}/test", { params: { path: { target_id: id } } })),
  };

  readonly filters = {
    create: (body: Schemas["FilterIn"]): Promise<Filter> => answer(this.api.POST("/v1/webhooks/filters", { body })),
    get: (id: string): Promise<Filter> =>
      answer(this.api.GET("/v1/webhooks/filters/{filter_id}", { params: { path: { filter_id: id } } })),
    list: (): Promise<Page<Filter>> => answer(this.api.GET("/v1/webhooks/filters", {})),
    delete: (id: string): Promise<void> =>
      answer(this.api.DELETE("/v1/webhooks/filters/{filter_id}", { params: { path: { filter_id: id } } })),
  };

  readonly subscriptions = {
    create: (body: Schemas["SubscriptionIn"]): Promise<Subscription> =>
      answer(this.api.POST("/v1/webhooks/subscriptions", { body })),
    get: (id: string): Promise<Subscription> =>
      answer(
        this.api.GET("/v1/webhooks/subscriptions/{subscription_id}", {
          params: { path: { subscription_id: id } },
        }),
      ),
    list: (): Promise<Page<Subscription>> => answer(this.api.GET("/v1/webhooks/subscriptions", {})),
    delete: (id: string): Promise<void> =>
      answer(
        this.api.DELETE("/v1/webhooks/subscriptions/{subscription_id}", {
          params: { path: { subscription_id: id } },
        }),
      ),
  };

  /** The tenant's webhook signing secret. */
  readonly secrets = {
    create: (): Promise<SigningSecret> => answer(this.api.POST("/v1/webhook-secret", {})),
    get: (): Promise<SecretStatus> => answer(this.api.GET("/v1/webhook-secret", {})),
    rotate: (): Promise<SigningSecret> => answer(this.api.POST("/v1/webhook-secret/rotate", {})),
    delete: (): Promise<void> => answer(this.api.DELETE("/v1/webhook-secret", {})),
  };

  readonly apiKeys = {
    create: (name: string): Promise<CreatedApiKey> => answer(this.api.POST("/v1/api-keys", { body: { name } })),
    list: async (): Promise<ApiKey[]> =>
      (await answer<{ data: ApiKey[] }>(this.api.GET("/v1/api-keys", {}))).data,
    revoke: (id: string): Promise<void> =>
      answer(this.api.DELETE("/v1/api-keys/{key_id}", { params: { path: { key_id: id } } })),
  };
}
