// Endpoint management (DESIGN §3 Endpoints). Secrets appear only on create, rotate and the
// admin-only secret route.
import {
  countEndpoints,
  createEndpoint,
  deleteEndpoint,
  getEndpoint,
  getEndpointRow,
  listEndpoints,
  setEndpointSecrets,
  updateEndpoint,
} from "../../endpoints/endpoints.ts";
import { patternLimitErrors } from "../../endpoints/patterns.ts";
import { activeSecrets, generateSecret, rotate } from "../../endpoints/secrets.ts";
import { endpointUrlProblem } from "../../endpoints/url-guard.ts";
import { invalidField, Problem, problems } from "../../lib/problem.ts";
import { requireScope } from "../auth.ts";
import { readJson } from "../body.ts";
import type { App, HttpDeps } from "../context.ts";
import { DEFAULT_LIMIT, page } from "../pagination.ts";
import { EndpointCreateSchema, EndpointPatchSchema, PageQuerySchema } from "../schemas.ts";
import { validate } from "../validation.ts";

export const MAX_ENDPOINTS = 1000;

export function endpointRoutes(app: App, deps: HttpDeps): void {
  const { db, clock, secretBox } = deps;
  const admin = requireScope(deps, "admin");
  const read = requireScope(deps, "read");

  const checkUrl = async (url: string) => {
    const problem = await endpointUrlProblem(url, deps.config.allowPrivateEndpoints, deps.resolver);
    if (problem) throw invalidField("/url", problem);
  };
  const checkPatterns = (patterns: readonly string[] | null | undefined) => {
    const errors = patternLimitErrors(patterns ?? [], deps.config, "/eventTypes");
    if (errors.length > 0) throw problems.invalid(errors);
  };
  const mustExist = <T>(value: T | undefined, id: string): T => {
    if (value === undefined) throw problems.notFound(`endpoint ${id} does not exist`);
    return value;
  };

  app.post("/v1/endpoints", admin, async (c) => {
    const body = validate(EndpointCreateSchema, await readJson(c, deps.config.maxBodyBytes));
    checkPatterns(body.eventTypes);
    await checkUrl(body.url);
    const secret = body.secret ?? generateSecret();
    const input = {
      url: body.url,
      eventTypes: body.eventTypes ?? [],
      description: body.description ?? null,
      sealedSecrets: secretBox.seal([{ secret, expiresAt: null }]),
    };
    // Counted in the same write as the insert: concurrent creates cannot overshoot the limit.
    const endpoint = await db.writer.write(
      (function* () {
        if ((yield* countEndpoints()) >= MAX_ENDPOINTS) return undefined;
        return yield* createEndpoint(input, clock());
      })(),
    );
    if (!endpoint) {
      throw new Problem(
        422,
        "too-many-endpoints",
        "Too many endpoints",
        `at most ${MAX_ENDPOINTS} endpoints`,
      );
    }
    return c.json({ ...endpoint, secret }, 201);
  });

  app.get("/v1/endpoints", read, async (c) => {
    const query = validate(PageQuerySchema, c.req.query());
    const limit = query.limit ?? DEFAULT_LIMIT;
    return c.json(page(await db.driver.read(listEndpoints(limit, query.after)), limit, (e) => e.id));
  });

  app.get("/v1/endpoints/:id", read, async (c) => {
    const id = c.req.param("id");
    return c.json(mustExist(await db.driver.read(getEndpoint(id)), id));
  });

  app.patch("/v1/endpoints/:id", admin, async (c) => {
    const id = c.req.param("id");
    const body = validate(EndpointPatchSchema, await readJson(c, deps.config.maxBodyBytes));
    checkPatterns(body.eventTypes);
    if (body.url != null) await checkUrl(body.url);
    const updated = await db.writer.write(
      updateEndpoint(
        id,
        {
          url: body.url ?? undefined,
          eventTypes: body.eventTypes ?? undefined,
          description: body.description,
          disabled: body.disabled ?? undefined,
        },
        clock(),
      ),
    );
    if (body.disabled === false) deps.dispatch?.wake();
    return c.json(mustExist(updated, id));
  });

  app.delete("/v1/endpoints/:id", admin, async (c) => {
    const id = c.req.param("id");
    const result = await db.writer.write(deleteEndpoint(id, clock()));
    if (!result.deleted) throw problems.notFound(`endpoint ${id} does not exist`);
    return c.json({ id, deleted: true, deadLettered: result.deadLettered });
  });

  app.post("/v1/endpoints/:id/enable", admin, async (c) => {
    const id = c.req.param("id");
    const updated = mustExist(await db.writer.write(updateEndpoint(id, { disabled: false }, clock())), id);
    deps.dispatch?.wake();
    return c.json(updated);
  });

  app.post("/v1/endpoints/:id/rotate-secret", admin, async (c) => {
    const id = c.req.param("id");
    const secret = generateSecret();
    // Read, rotate and store in one write so two rotations cannot lose a secret.
    const rotated = await db.writer.write(
      (function* () {
        const row = yield* getEndpointRow(id);
        if (!row) return false;
        const now = clock();
        const next = rotate(secretBox.open(row.secrets), secret, now, deps.config.secretGraceMs);
        return yield* setEndpointSecrets(id, secretBox.seal(next), now);
      })(),
    );
    if (!rotated) throw problems.notFound(`endpoint ${id} does not exist`);
    return c.json({ secret });
  });

  app.get("/v1/endpoints/:id/secret", admin, async (c) => {
    const id = c.req.param("id");
    const row = mustExist(await db.driver.read(getEndpointRow(id)), id);
    const secrets = activeSecrets(secretBox.open(row.secrets), clock());
    return c.json({ secret: secrets[0], previous: secrets.slice(1) });
  });

  app.post("/v1/endpoints/:id/test", admin, async (c) => {
    const id = c.req.param("id");
    mustExist(await db.driver.read(getEndpointRow(id)), id);
    if (!deps.dispatch) throw problems.unavailable("this process runs no dispatcher");
    return c.json(await deps.dispatch.ping(id));
  });
}
