// Endpoint management (DESIGN §3 Endpoints). Secrets appear only on create, rotate and the
// admin-only secret route.
import type { Context } from "hono";
import type * as v from "valibot";
import { deadlineWithin } from "../../deliveries/deadline.ts";
import { disableAfterError, filterErrors } from "../../endpoints/controls.ts";
import {
  type EndpointKind,
  getEndpoint,
  getEndpointRow,
  listEndpoints,
  type StoredControls,
} from "../../endpoints/endpoints.ts";
import { patternLimitErrors } from "../../endpoints/patterns.ts";
import { recoverEndpoint } from "../../endpoints/recover.ts";
import { activeSecrets, generateSecret, rotate } from "../../endpoints/secrets.ts";
import type { Actor } from "../../endpoints/system-events.ts";
import { endpointUrlProblem } from "../../endpoints/url-guard.ts";
import {
  createEndpointWrite,
  deleteEndpointWrite,
  replaceEndpointSecretsWrite,
  updateEndpointWrite,
} from "../../endpoints/writes.ts";
import { type FieldError, invalidField, Problem, problems } from "../../lib/problem.ts";
import { readJson } from "../body.ts";
import type { App, AppEnv, HttpDeps } from "../context.ts";
import { scopedRoute } from "../openapi/route.ts";
import { DEFAULT_LIMIT, page } from "../pagination.ts";
import {
  EndpointAnswer,
  EndpointCreatedAnswer,
  EndpointDeletedAnswer,
  PingAnswer,
  pageOf,
  RecoveredAnswer,
  SecretAnswer,
  SecretsAnswer,
} from "../responses.ts";
import { EndpointCreateSchema, EndpointPatchSchema, PageQuerySchema, RecoverSchema } from "../schemas.ts";
import { validate } from "../validation.ts";
import { ENDPOINT_EXAMPLE, ENDPOINT_ID, PAGED, pageExample, SECRET, T } from "./examples.ts";

type ControlsBody = Pick<
  v.InferOutput<typeof EndpointPatchSchema>,
  "rateLimit" | "retrySchedule" | "disableAfter" | "filter"
>;

export const MAX_ENDPOINTS = 1000;

/** The token acting on an endpoint: its system events' committer (DESIGN §19). */
function actorOf(c: Context<AppEnv>): Actor {
  const identity = c.get("identity");
  return { tokenId: identity.id, tokenName: identity.name };
}

export function endpointRoutes(app: App, deps: HttpDeps): void {
  const { db, clock, secretBox } = deps;
  const tag = "Endpoints";

  const checkUrl = async (url: string) => {
    const problem = await endpointUrlProblem(url, deps.config.allowPrivateEndpoints, deps.resolver);
    if (problem) throw invalidField("/url", problem);
  };
  const checkPatterns = (patterns: readonly string[] | null | undefined) => {
    const errors = patternLimitErrors(patterns ?? [], deps.config, "/eventTypes");
    if (errors.length > 0) throw problems.invalid(errors);
  };
  /**
   * The controls of a create or PATCH body (DESIGN §19), checked against the endpoint's kind and
   * this configuration: undefined leaves a control as it is, null removes it.
   */
  const controlsOf = (body: ControlsBody, kind: EndpointKind): Partial<StoredControls> => {
    const errors: FieldError[] = [];
    if (kind === "pull") {
      if (body.rateLimit != null)
        errors.push({ pointer: "/rateLimit", detail: "is for webhook endpoints only" });
      if (body.disableAfter != null)
        errors.push({ pointer: "/disableAfter", detail: "is for webhook endpoints only" });
    }
    if (body.disableAfter != null) {
      const error = disableAfterError(body.disableAfter, deps.config.allowFailpoints);
      if (error) errors.push({ pointer: "/disableAfter", detail: error });
    }
    if (body.filter != null) errors.push(...filterErrors(body.filter, "/filter"));
    if (errors.length > 0) throw problems.invalid(errors);
    const { rateLimit } = body;
    return {
      rateLimit:
        rateLimit == null
          ? rateLimit
          : { perSecond: rateLimit.perSecond, burst: rateLimit.burst ?? rateLimit.perSecond },
      retrySchedule: body.retrySchedule,
      filter:
        body.filter == null ? body.filter : body.filter.map(({ path, op, value }) => ({ path, op, value })),
      disableAfter: body.disableAfter ?? undefined,
    };
  };
  const systemEvents = { deliverWithinMs: deps.config.defaultDeliverWithinMs };
  const mustExist = <T>(value: T | undefined, id: string): T => {
    if (value === undefined) throw problems.notFound(`endpoint ${id} does not exist`);
    return value;
  };
  const kindOf = async (id: string) => mustExist(await db.driver.read(getEndpointRow(id)), id).kind;
  /** Secrets and test sends are a webhook's (DESIGN §12: 409 on a pull endpoint). */
  const mustBeWebhook = async (id: string) => {
    if ((await kindOf(id)) === "pull") {
      throw problems.conflict(
        "pull-endpoint",
        `endpoint ${id} is a pull endpoint: it has no secret and no url`,
      );
    }
  };

  app.post(
    "/v1/endpoints",
    scopedRoute(deps, {
      scopes: "admin",
      tag,
      summary: "Create an endpoint",
      description:
        "A webhook endpoint (`kind` `webhook`, the default) needs a `url`: `https` and not internal unless " +
        "`OUTBOXD_ALLOW_PRIVATE_ENDPOINTS` is set. A pull endpoint (`kind` `pull`) takes neither `url` nor " +
        "`secret`: consumers with the `consume` scope poll or stream its deliveries. Event-type " +
        "patterns: an exact type, `prefix.*` or `*`; none = every event (`outboxd.*` events only " +
        "reach patterns that start with `outboxd.`). Controls (DESIGN §19): `rateLimit`, `retrySchedule`, " +
        '`disableAfter` (default "5d") and `filter`. The answer is the only place, with rotate and the ' +
        "secret route, where the signing secret appears.",
      body: {
        schema: EndpointCreateSchema,
        example: {
          url: "https://returns.example.com/hooks/outboxd",
          eventTypes: ["return.*"],
          rateLimit: { perSecond: 50, burst: 100 },
          retrySchedule: ["5s", "30s", "2m", "10m", "1h"],
          filter: [{ path: "/data/status", op: "in", value: ["approved", "refunded"] }],
        },
      },
      answers: {
        201: {
          description: "Created, with its signing secret.",
          schema: EndpointCreatedAnswer,
          example: { ...ENDPOINT_EXAMPLE, lastSuccessAt: null, secret: SECRET },
        },
      },
      problems: [400, 413, 422],
    }),
    async (c) => {
      const body = validate(EndpointCreateSchema, await readJson(c, deps.config.maxBodyBytes));
      checkPatterns(body.eventTypes);
      const kind = body.kind ?? "webhook";
      if (kind === "pull") {
        // Nothing is sent to a pull endpoint and nothing signed for it (DESIGN §12).
        if (body.url != null) throw invalidField("/url", "must be absent for a pull endpoint");
        if (body.secret != null) throw invalidField("/secret", "must be absent for a pull endpoint");
      } else {
        if (body.url == null) throw invalidField("/url", "is required for a webhook endpoint");
        await checkUrl(body.url);
      }
      const controls = controlsOf(body, kind);
      const secret = kind === "pull" ? undefined : (body.secret ?? generateSecret());
      const input = {
        kind,
        url: body.url ?? "",
        eventTypes: body.eventTypes ?? [],
        description: body.description ?? null,
        sealedSecrets: secretBox.seal(secret === undefined ? [] : [{ secret, expiresAt: null }]),
        controls,
      };
      // Counted in the same write as the insert: concurrent creates cannot overshoot the limit.
      const endpoint = await db.write(createEndpointWrite(MAX_ENDPOINTS, input, clock()));
      if (!endpoint) {
        throw new Problem(
          422,
          "too-many-endpoints",
          "Too many endpoints",
          `at most ${MAX_ENDPOINTS} endpoints`,
        );
      }
      return c.json(secret === undefined ? endpoint : { ...endpoint, secret }, 201);
    },
  );

  app.get(
    "/v1/endpoints",
    scopedRoute(deps, {
      scopes: "read",
      tag,
      summary: "List endpoints",
      description: PAGED,
      query: PageQuerySchema,
      answers: {
        200: {
          description: "A page of endpoints (no secrets).",
          schema: pageOf(EndpointAnswer),
          example: pageExample(ENDPOINT_EXAMPLE),
        },
      },
      problems: [422],
    }),
    async (c) => {
      const query = validate(PageQuerySchema, c.req.query());
      const limit = query.limit ?? DEFAULT_LIMIT;
      return c.json(page(await db.driver.read(listEndpoints(limit, query.after)), limit, (e) => e.id));
    },
  );

  app.get(
    "/v1/endpoints/:id",
    scopedRoute(deps, {
      scopes: "read",
      tag,
      summary: "Read an endpoint",
      description:
        "With its health: `lastSuccessAt`, `lastFailureAt`, `disabled` and why, `pending`, `dead`.",
      answers: {
        200: { description: "The endpoint (no secrets).", schema: EndpointAnswer, example: ENDPOINT_EXAMPLE },
      },
      problems: [404],
    }),
    async (c) => {
      const id = c.req.param("id");
      return c.json(mustExist(await db.driver.read(getEndpoint(id)), id));
    },
  );

  app.patch(
    "/v1/endpoints/:id",
    scopedRoute(deps, {
      scopes: "admin",
      tag,
      summary: "Change an endpoint",
      description:
        "Omitted fields are left as they are; `null` on `rateLimit`, `retrySchedule` or `filter` removes " +
        "that control. `disabled: true` disables the endpoint (reason `operator`), `false` enables it.",
      body: { schema: EndpointPatchSchema, example: { disabled: true } },
      answers: {
        200: {
          description: "The changed endpoint.",
          schema: EndpointAnswer,
          example: {
            ...ENDPOINT_EXAMPLE,
            disabled: true,
            disabledReason: "operator",
            disabledDetail: "disabled by an operator",
            disabledAt: T,
          },
        },
      },
      problems: [400, 404, 413, 422],
    }),
    async (c) => {
      const id = c.req.param("id");
      const body = validate(EndpointPatchSchema, await readJson(c, deps.config.maxBodyBytes));
      checkPatterns(body.eventTypes);
      const kind = await kindOf(id);
      if (body.url != null) {
        if (kind === "pull") throw invalidField("/url", "must be absent for a pull endpoint");
        await checkUrl(body.url);
      }
      const controls = controlsOf(body, kind);
      const updated = await db.write(
        updateEndpointWrite(
          id,
          {
            url: body.url ?? undefined,
            eventTypes: body.eventTypes ?? undefined,
            description: body.description,
            disabled: body.disabled ?? undefined,
            controls,
          },
          clock(),
          actorOf(c),
          systemEvents,
        ),
      );
      if (body.disabled === false) deps.dispatch?.wake();
      return c.json(mustExist(updated, id).endpoint);
    },
  );

  app.delete(
    "/v1/endpoints/:id",
    scopedRoute(deps, {
      scopes: "admin",
      tag,
      summary: "Delete an endpoint",
      description: "Its pending deliveries go dead with reason `endpoint_deleted`.",
      answers: {
        200: {
          description: "Deleted.",
          schema: EndpointDeletedAnswer,
          example: { id: ENDPOINT_ID, deleted: true, deadLettered: 0 },
        },
      },
      problems: [404],
    }),
    async (c) => {
      const id = c.req.param("id");
      const result = await db.write(deleteEndpointWrite(id, clock()));
      if (!result.deleted) throw problems.notFound(`endpoint ${id} does not exist`);
      return c.json({ id, deleted: true, deadLettered: result.deadLettered });
    },
  );

  app.post(
    "/v1/endpoints/:id/enable",
    scopedRoute(deps, {
      scopes: "admin",
      tag,
      summary: "Enable a disabled endpoint",
      description: "After a 410 Gone or a PATCH disabled it; its pending deliveries resume.",
      answers: { 200: { description: "The endpoint.", schema: EndpointAnswer, example: ENDPOINT_EXAMPLE } },
      problems: [404],
    }),
    async (c) => {
      const id = c.req.param("id");
      const updated = mustExist(
        await db.write(updateEndpointWrite(id, { disabled: false }, clock(), actorOf(c), systemEvents)),
        id,
      );
      deps.dispatch?.wake();
      return c.json(updated.endpoint);
    },
  );

  app.post(
    "/v1/endpoints/:id/recover",
    scopedRoute(deps, {
      scopes: "admin",
      tag,
      summary: "Recover an endpoint after an outage",
      description:
        "Replays this endpoint's `deadline_exceeded` deliveries whose event `occurredAt` is in [since, until] " +
        "(until: now), in sequence order per aggregate, skipping erased events, in chunked transactions, and " +
        "enables the endpoint in the last one. New deadline: `deliverWithin` (default as at commit).",
      body: { schema: RecoverSchema, example: { since: T, deliverWithin: "24h" } },
      answers: {
        200: {
          description: "How many went back to pending, how many were skipped.",
          schema: RecoveredAnswer,
          example: { replayed: 120, skipped: 0, enabled: true },
        },
      },
      problems: [400, 404, 413, 422],
    }),
    async (c) => {
      const id = c.req.param("id");
      const body = validate(RecoverSchema, await readJson(c, deps.config.maxBodyBytes));
      const now = clock();
      const since = Date.parse(body.since);
      const until = body.until == null ? now : Date.parse(body.until);
      if (until < since) throw invalidField("/until", "must not be before since");
      let deliverBy = now + deps.config.defaultDeliverWithinMs;
      if (body.deliverWithin != null) {
        const deadline = deadlineWithin(now, body.deliverWithin);
        if (!deadline.ok) throw invalidField("/deliverWithin", deadline.detail);
        deliverBy = deadline.deliverBy;
      }
      mustExist(await db.driver.read(getEndpointRow(id)), id);
      const recovered = await recoverEndpoint(db, {
        range: { endpointId: id, since, until },
        now,
        deliverBy,
        by: actorOf(c),
        settings: systemEvents,
      });
      deps.dispatch?.wake();
      return c.json(recovered);
    },
  );

  app.post(
    "/v1/endpoints/:id/rotate-secret",
    scopedRoute(deps, {
      scopes: "admin",
      tag,
      summary: "Rotate the signing secret",
      description:
        "Every unexpired older secret keeps signing until its own expiry (`OUTBOXD_SECRET_GRACE`, 24h).",
      answers: { 200: { description: "The new secret.", schema: SecretAnswer, example: { secret: SECRET } } },
      problems: [404, 409],
    }),
    async (c) => {
      const id = c.req.param("id");
      await mustBeWebhook(id);
      const secret = generateSecret();
      // Rotated from the list as read, stored only if that is still the list: a rotation that
      // lost the race reads the winner's list and rotates that, so no secret is lost.
      for (;;) {
        const row = await db.driver.read(getEndpointRow(id));
        if (!row) throw problems.notFound(`endpoint ${id} does not exist`);
        const now = clock();
        const next = rotate(secretBox.open(row.secrets), secret, now, deps.config.secretGraceMs);
        if (await db.write(replaceEndpointSecretsWrite(id, row.secrets, secretBox.seal(next), now))) break;
      }
      return c.json({ secret });
    },
  );

  app.get(
    "/v1/endpoints/:id/secret",
    scopedRoute(deps, {
      scopes: "admin",
      tag,
      summary: "Read the signing secrets",
      answers: {
        200: {
          description: "The current secret and the older ones still signing.",
          schema: SecretsAnswer,
          example: { secret: SECRET, previous: [] },
        },
      },
      problems: [404, 409],
    }),
    async (c) => {
      const id = c.req.param("id");
      await mustBeWebhook(id);
      const row = mustExist(await db.driver.read(getEndpointRow(id)), id);
      const secrets = activeSecrets(secretBox.open(row.secrets), clock());
      return c.json({ secret: secrets[0], previous: secrets.slice(1) });
    },
  );

  app.post(
    "/v1/endpoints/:id/test",
    scopedRoute(deps, {
      scopes: "admin",
      tag,
      summary: "Send a signed outboxd.ping now",
      answers: {
        200: {
          description: "The receiver's answer.",
          schema: PingAnswer,
          example: { statusCode: 200, error: null, durationMs: 12, responsePrefix: '{"result":"applied"}' },
        },
      },
      problems: [404, 409, 503],
    }),
    async (c) => {
      const id = c.req.param("id");
      await mustBeWebhook(id);
      if (!deps.dispatch) throw problems.unavailable("this process runs no dispatcher");
      return c.json(await deps.dispatch.ping(id));
    },
  );
}
