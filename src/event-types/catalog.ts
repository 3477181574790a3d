// The event-type catalog in memory (DESIGN §9): what a commit checks its events against,
// without a statement of its own. This process's own changes update the cache as they are
// written; changes made by other processes (several outboxd machines on one database) are
// noticed through the catalog's version counter, read at most once per `refreshMs` off the
// commit path. An empty catalog in `open` mode costs a commit one map lookup per event.
// The JSON Schema compiler (./payload-schema.ts, ajv) is imported on the first schema, not at start.
import type { Database } from "../db/open.ts";
import { type FieldError, problems } from "../lib/problem.ts";
import type { Clock } from "../lib/time.ts";
import { BUILTIN_EVENT_TYPES, isReservedType } from "./builtin.ts";
import type { PayloadValidator } from "./payload-schema.ts";
import { catalogVersion, type EventTypeRow, type EventTypeWrite, loadCatalog } from "./store.ts";
import { deleteEventTypeWrite, putEventTypeWrite } from "./writes.ts";

export type EventTypesMode = "strict" | "open";

interface Entry {
  row: EventTypeRow;
  /** The payload check; "unsupported" for a stored schema whose patterns cannot be run. */
  validate: PayloadValidator | "unsupported" | null;
}

export interface EventCheck {
  type: string;
  payload?: unknown;
}

export interface CatalogDeps {
  db: Database;
  clock: Clock;
  mode: EventTypesMode;
  /** How stale another process's change may be seen here, at most (ms). */
  refreshMs?: number;
  onRefreshError?: (error: unknown) => void;
}

export class EventTypeCatalog {
  readonly #deps: CatalogDeps;
  /** The stored entries and the built-in ones (builtin.ts), which no stored row replaces. */
  #entries = new Map<string, Entry>();
  /** How many of #entries are stored ones: none in `open` mode, and a commit checks nothing. */
  #stored = 0;
  /** Compiled validators by schema text: a reload recompiles only what changed. */
  #compiled = new Map<string, PayloadValidator | "unsupported">();
  #version = -1;
  #checkedAt = Number.NEGATIVE_INFINITY;
  #refreshing: Promise<void> | null = null;

  constructor(deps: CatalogDeps) {
    this.#deps = deps;
  }

  get mode(): EventTypesMode {
    return this.#deps.mode;
  }

  /** Reads the whole catalog from the database (at start, and when the version moved). */
  async load(): Promise<void> {
    const { version, rows } = await this.#deps.db.driver.read(loadCatalog());
    const entries = new Map<string, Entry>();
    const compiled = new Map<string, PayloadValidator | "unsupported">();
    for (const row of rows) {
      const validate = row.schema === null ? null : await this.#compile(row.schema, compiled, true);
      entries.set(row.type, { row, validate });
    }
    const stored = entries.size;
    // Not compiled: no client commits these types (normalize.ts refuses reserved names), and
    // outboxd's own events are made to their schemas (src/endpoints/system-events.ts).
    for (const row of BUILTIN_EVENT_TYPES) entries.set(row.type, { row, validate: null });
    // Compiling awaits the compiler's import: this process's own change may have landed meanwhile.
    if (version < this.#version) return;
    this.#entries = entries;
    this.#stored = stored;
    this.#compiled = compiled;
    this.#version = version;
    this.#checkedAt = this.#deps.clock();
  }

  /** Re-reads the catalog if another process changed it (one read of the version counter). */
  async refresh(): Promise<void> {
    const version = await this.#deps.db.driver.read(catalogVersion());
    if (version !== this.#version) await this.load();
    else this.#checkedAt = this.#deps.clock();
  }

  /**
   * The stored types whose schema has patterns the linear-time engine cannot run or costs over
   * the limit to validate: kept, their events refused (422 schema-unsupported) until the schema
   * is replaced.
   */
  unsupported(): string[] {
    return [...this.#entries.values()].filter((e) => e.validate === "unsupported").map((e) => e.row.type);
  }

  /** The registered types as cached now, the built-in ones included, ordered by type. */
  rows(): EventTypeRow[] {
    return [...this.#entries.values()]
      .map((e) => e.row)
      .sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0));
  }

  /**
   * Checks events against the catalog: payload schemas, and in strict mode that the type is
   * registered. Throws a 422 naming every violation (pointers under `at`, e.g. `/events`);
   * returns the deprecation time (ms) of the most recently deprecated type used, or null.
   */
  check(events: readonly EventCheck[], at: string): number | null {
    this.#maybeRefresh();
    if (this.#stored === 0 && this.#deps.mode === "open") return null;
    const errors: FieldError[] = [];
    let deprecatedAt: number | null = null;
    events.forEach((event, i) => {
      const entry = this.#entries.get(event.type);
      if (!entry) {
        if (this.#deps.mode === "strict") {
          errors.push({
            pointer: `${at}/${i}/type`,
            detail: `${event.type} is not a registered event type (OUTBOXD_EVENT_TYPES=strict)`,
          });
        }
        return;
      }
      if (entry.validate === "unsupported") throw this.#schemaUnsupported(event.type, `${at}/${i}/type`);
      if (entry.validate) errors.push(...entry.validate(event.payload ?? {}, `${at}/${i}/payload`));
      const since = entry.row.deprecatedAt;
      if (since !== null && (deprecatedAt === null || since > deprecatedAt)) deprecatedAt = since;
    });
    if (errors.length > 0) throw problems.invalid(errors);
    return deprecatedAt;
  }

  /** Registers or replaces a type (a schema that does not compile is a 422, nothing written). */
  async put(write: EventTypeWrite): Promise<{ row: EventTypeRow; created: boolean }> {
    refuseReserved(write.type);
    const validate = write.schema === null ? null : await this.#compile(write.schema, this.#compiled);
    const result = await this.#deps.db.write(putEventTypeWrite(write, this.#deps.clock()));
    await this.#applied(result.version, () => {
      if (!this.#entries.has(write.type)) this.#stored++;
      this.#entries.set(write.type, { row: result.row, validate });
    });
    return result;
  }

  /** Removes a type; false when it was not registered. */
  async delete(type: string): Promise<boolean> {
    refuseReserved(type);
    const version = await this.#deps.db.write(deleteEventTypeWrite(type));
    if (version === undefined) return false;
    await this.#applied(version, () => {
      if (this.#entries.delete(type)) this.#stored--;
    });
    return true;
  }

  /** Applies this process's own change, or reloads when another process changed the catalog too. */
  async #applied(version: number, change: () => void): Promise<void> {
    if (version === this.#version + 1) {
      change();
      this.#version = version;
    } else {
      await this.load();
    }
  }

  /**
   * A schema's validator. A new schema (`stored` false) that cannot be compiled is a 422; a stored
   * one whose patterns cannot be run is "unsupported" (compiled as stored: rules added since
   * for new schemas do not apply to it).
   */
  async #compile(
    schemaText: string,
    cache: Map<string, PayloadValidator | "unsupported">,
    stored = false,
  ): Promise<PayloadValidator | "unsupported"> {
    const known = this.#compiled.get(schemaText) ?? cache.get(schemaText);
    if (known !== undefined && (stored || known !== "unsupported")) {
      cache.set(schemaText, known);
      return known;
    }
    const { compilePayloadSchema, UnsupportedSchema, schemaUnsupported } = await import(
      "./payload-schema.ts"
    );
    this.#schemaUnsupported = schemaUnsupported;
    let validate: PayloadValidator | "unsupported";
    try {
      validate = compilePayloadSchema(JSON.parse(schemaText), "/schema", stored);
    } catch (error) {
      if (!(stored && error instanceof UnsupportedSchema)) throw error;
      validate = "unsupported";
    }
    cache.set(schemaText, validate);
    return validate;
  }

  /** Set with the compiler's module (an "unsupported" entry exists only once it is loaded). */
  #schemaUnsupported: (type: string, pointer: string) => Error = () =>
    new Error("schema compiler not loaded");

  #maybeRefresh(): void {
    const { clock, refreshMs = 1000 } = this.#deps;
    if (this.#refreshing || clock() - this.#checkedAt < refreshMs) return;
    this.#refreshing = this.refresh()
      .catch((error) => this.#deps.onRefreshError?.(error))
      .finally(() => {
        this.#refreshing = null;
      });
  }
}

/** DESIGN §9 reserved names: `outboxd.*` types are outboxd's own; registering or removing one is 409. */
function refuseReserved(type: string): void {
  if (isReservedType(type)) {
    throw problems.conflict(
      "reserved-type",
      `${type} is reserved: event types starting outboxd. are outboxd's own`,
    );
  }
}
