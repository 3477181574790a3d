// The receiver snippet under Bun: the portable checks on both the .ts and the generated .js,
// known-answer vectors computed independently with node:crypto, cross-checks in both directions
// with the official `standardwebhooks` library and `svix`, and the inbox on a real SQLite file
// shared by concurrent connections. Deno and Node.js run the portable checks in
// scripts/test-snippet.sh.
import { Database } from "bun:sqlite";
import { afterEach, beforeEach, describe, expect, setSystemTime, test } from "bun:test";
import { createHmac } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { Webhook as SvixWebhook } from "svix";
import { buildSnippet } from "../../scripts/build-snippet.ts";
import * as js from "../../src/receiver/verify.js";
import * as ts from "../../src/receiver/verify.ts";
import { applyOnce, type OutboxEvent, verifyWebhook, WebhookError } from "../../src/receiver/verify.ts";
import type { InboxJob } from "./inbox-worker.ts";
import {
  BODY,
  checks,
  EVENT,
  ID,
  KNOWN_SIGNATURE,
  NOW,
  OTHER_SECRET,
  SECRET,
  TIMESTAMP,
} from "./portable-checks.mjs";
import { sqliteStore } from "./sqlite-store.ts";

/** Signs as the wire format says, with node:crypto: independent of the snippet's Web Crypto code. */
function nodeSign(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  return `v1,${createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64")}`;
}

function headersFor(signature: string, id = ID, timestamp = TIMESTAMP): Record<string, string> {
  return { "webhook-id": id, "webhook-timestamp": String(timestamp), "webhook-signature": signature };
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(error instanceof WebhookError)) throw new Error(`expected a WebhookError, got ${error}`);
  return error.code;
}

describe("portable checks (the same ones Deno and Node.js run)", () => {
  test("verify.js is a separate module with the same exports as verify.ts", () => {
    // Guards against the import resolving both paths to the .ts, which would test it twice.
    expect(js.verifyWebhook).not.toBe(ts.verifyWebhook);
    expect(Object.keys(js).sort()).toEqual(Object.keys(ts).sort());
  });
  for (const [name, check] of checks) {
    test(`verify.ts: ${name}`, () => check(ts));
    test(`verify.js: ${name}`, () => check(js));
  }
});

describe("known-answer vectors", () => {
  test("node:crypto reproduces the vector derived from standardwebhooks, and the snippet accepts it", async () => {
    expect(nodeSign(SECRET, ID, TIMESTAMP, BODY)).toBe(KNOWN_SIGNATURE);
    const event = await verifyWebhook({ headers: headersFor(KNOWN_SIGNATURE), body: BODY }, SECRET, {
      now: NOW,
    });
    expect(event).toEqual(EVENT);
  });

  test("the Standard Webhooks specification's example signature", async () => {
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const [id, timestamp, body] = ["msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, '{"test": 2432232314}'];
    const signature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";
    expect(nodeSign(secret, id, timestamp, body)).toBe(signature);
    const verify = (sig: string) =>
      verifyWebhook({ headers: headersFor(sig, id, timestamp), body }, secret, { now: timestamp * 1000 });
    // The signature is accepted; the body is then refused only because it is not an outboxd event.
    expect(await refusal(verify(signature))).toBe("bad_body");
    expect(await refusal(verify(signature.replace("g0h", "g1h")))).toBe("bad_signature");
  });
});

describe("interoperability with the official libraries", () => {
  // standardwebhooks and svix read the clock themselves: pin it instead of waiting for anything.
  beforeEach(() => setSystemTime(new Date(NOW)));
  afterEach(() => setSystemTime());

  const libraries = [
    ["standardwebhooks", (secret: string) => new StandardWebhook(secret)],
    ["svix", (secret: string) => new SvixWebhook(secret)],
  ] as const;

  for (const [name, make] of libraries) {
    test(`what ${name} signs, the snippet verifies`, async () => {
      const signature = make(SECRET).sign(ID, new Date(NOW), BODY);
      expect(signature).toBe(KNOWN_SIGNATURE);
      expect(await verifyWebhook({ headers: headersFor(signature), body: BODY }, SECRET)).toEqual(EVENT);
      // And what it refuses, the snippet refuses.
      expect(await refusal(verifyWebhook({ headers: headersFor(signature), body: `${BODY} ` }, SECRET))).toBe(
        "bad_signature",
      );
    });

    test(`what outboxd's wire format signs, ${name} verifies (one or two signatures)`, () => {
      const single = headersFor(nodeSign(SECRET, ID, TIMESTAMP, BODY));
      expect(make(SECRET).verify(BODY, single)).toEqual(EVENT);
      const rotation = headersFor(
        `${nodeSign(OTHER_SECRET, ID, TIMESTAMP, BODY)} ${single["webhook-signature"]}`,
      );
      expect(make(SECRET).verify(BODY, rotation)).toEqual(EVENT);
      expect(make(OTHER_SECRET).verify(BODY, rotation)).toEqual(EVENT);
      expect(() => make(SECRET).verify(`${BODY} `, single)).toThrow();
    });
  }

  test("svix also accepts the same signature under its svix-* header names", () => {
    const signature = nodeSign(SECRET, ID, TIMESTAMP, BODY);
    const svixHeaders = { "svix-id": ID, "svix-timestamp": String(TIMESTAMP), "svix-signature": signature };
    expect(new SvixWebhook(SECRET).verify(BODY, svixHeaders)).toEqual(EVENT);
  });

  test("the libraries and the snippet agree on the tolerance edge (300 s)", async () => {
    const signed = (timestamp: number) => headersFor(nodeSign(SECRET, ID, timestamp, BODY), ID, timestamp);
    for (const [timestamp, ok] of [
      [TIMESTAMP - 300, true],
      [TIMESTAMP + 300, true],
      [TIMESTAMP - 301, false],
      [TIMESTAMP + 301, false],
    ] as const) {
      const snippet = await verifyWebhook({ headers: signed(timestamp), body: BODY }, SECRET).then(
        () => true,
        () => false,
      );
      const library = (() => {
        try {
          new StandardWebhook(SECRET).verify(BODY, signed(timestamp));
          return true;
        } catch {
          return false;
        }
      })();
      expect([timestamp - TIMESTAMP, snippet]).toEqual([timestamp - TIMESTAMP, ok]);
      expect([timestamp - TIMESTAMP, library]).toEqual([timestamp - TIMESTAMP, ok]);
    }
  });
});

describe("verifyWebhook on Node-style headers", () => {
  test("a repeated header given as an array counts every signature in it", async () => {
    const headers = { ...headersFor("v1,AAAA"), "webhook-signature": ["v1,AAAA", KNOWN_SIGNATURE] };
    expect(await verifyWebhook({ headers, body: Buffer.from(BODY) }, SECRET, { now: NOW })).toEqual(EVENT);
  });

  test("each refusal names its reason", async () => {
    const verify = (headers: Record<string, string>, body = BODY, secrets: string | string[] = SECRET) =>
      refusal(verifyWebhook({ headers, body }, secrets, { now: NOW }));
    const good = headersFor(KNOWN_SIGNATURE);
    expect(await verify({ ...good, "webhook-signature": "" })).toBe("missing_header");
    expect(await verify(headersFor(KNOWN_SIGNATURE, ID, TIMESTAMP - 301))).toBe("timestamp_too_old");
    expect(await verify(headersFor(KNOWN_SIGNATURE, ID, TIMESTAMP + 301))).toBe("timestamp_in_future");
    expect(await verify(good, BODY.replace("r-123", "r-124"))).toBe("bad_signature");
    expect(await verify(headersFor(KNOWN_SIGNATURE, "evt-other"))).toBe("bad_signature");
    expect(await verify(good, BODY, OTHER_SECRET)).toBe("bad_signature");
    expect(await verify(good, BODY, [OTHER_SECRET, SECRET]).catch(() => "verified")).toBe("verified");
  });
});

describe("applyOnce with a real SQLite inbox", () => {
  let dir: string;
  let path: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "outboxd-inbox-"));
    path = join(dir, "receiver.db");
    const db = new Database(path);
    db.exec("PRAGMA journal_mode = WAL");
    db.exec(ts.INBOX_SQL.sqlite.create);
    // The receiver's own table; deliberately without a unique key, so a double apply would show.
    db.exec(
      "CREATE TABLE effects (n INTEGER PRIMARY KEY, event_id TEXT NOT NULL, sequence INTEGER NOT NULL)",
    );
    db.close();
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const open = () => {
    const db = new Database(path);
    db.exec("PRAGMA busy_timeout = 30000");
    return db;
  };
  const event = (sequence: number, id = `evt-${sequence}`): OutboxEvent => ({ ...EVENT, id, sequence });
  const effects = (db: Database) =>
    db
      .query<{ event_id: string; sequence: number }, []>("SELECT event_id, sequence FROM effects ORDER BY n")
      .all();
  const record = (e: OutboxEvent, tx: Database) => {
    tx.prepare("INSERT INTO effects (event_id, sequence) VALUES (?, ?)").run(e.id, e.sequence);
  };

  /** Runs one worker thread per event, each with its own connection, released together. */
  async function deliverConcurrently(events: OutboxEvent[]): Promise<string[]> {
    const gate = new Int32Array(new SharedArrayBuffer(8));
    const workers: Worker[] = [];
    let ready = 0;
    const results = events.map((event) => {
      const worker = new Worker(new URL("./inbox-worker.ts", import.meta.url).href);
      workers.push(worker);
      return new Promise<string>((resolve) => {
        worker.onmessage = ({ data }: MessageEvent<string>) => {
          if (data !== "ready") return resolve(data);
          // Every connection is open and waiting: release them all at once.
          if (++ready === events.length) {
            Atomics.store(gate, 1, 1);
            Atomics.notify(gate, 1);
          }
        };
        worker.onerror = (error) => resolve(`error: ${error.message}`);
        worker.postMessage({ path, event, gate } satisfies InboxJob);
      });
    });
    try {
      return await Promise.all(results);
    } finally {
      for (const worker of workers) worker.terminate();
    }
  }

  test("in order, duplicate, stale and gap: each applied change is committed with its sequence", async () => {
    const db = open();
    const store = sqliteStore(db);
    const results = [];
    for (const e of [event(1), event(2), event(2), event(1), event(4), event(3)]) {
      results.push(await applyOnce(e, store, record));
    }
    expect(results).toEqual([
      { result: "applied", missed: 0, missedForEndpoint: false },
      { result: "applied", missed: 0, missedForEndpoint: false },
      { result: "duplicate", missed: 0, missedForEndpoint: false },
      { result: "stale", missed: 0, missedForEndpoint: false },
      { result: "applied", missed: 1, missedForEndpoint: false },
      { result: "stale", missed: 0, missedForEndpoint: false },
    ]);
    expect(effects(db).map((e) => e.sequence)).toEqual([1, 2, 4]);
    expect(db.query("SELECT aggregate, sequence, event_id FROM outboxd_inbox").all()).toEqual([
      { aggregate: "returns/r-123", sequence: 4, event_id: "evt-4" },
    ]);
    db.close();
  });

  test("a failing apply rolls back the recorded sequence with it, so the redelivery applies", async () => {
    const db = open();
    const store = sqliteStore(db);
    const failing = applyOnce(event(1), store, (e, tx) => {
      record(e, tx);
      throw new Error("downstream refused");
    });
    await expect(failing).rejects.toThrow("downstream refused");
    expect(effects(db)).toEqual([]);
    expect(await applyOnce(event(1), store, record)).toEqual({
      result: "applied",
      missed: 0,
      missedForEndpoint: false,
    });
    expect(effects(db)).toEqual([{ event_id: "evt-1", sequence: 1 }]);
    db.close();
  });

  test("deliveries arriving together on one connection queue instead of nesting transactions", async () => {
    const db = open();
    const store = sqliteStore(db);
    const results = await Promise.all(Array.from({ length: 6 }, () => applyOnce(event(1), store, record)));
    expect(results.map((r) => r.result).sort()).toEqual(["applied", ...Array(5).fill("duplicate")]);
    expect(effects(db)).toHaveLength(1);
    db.close();
  });

  test("8 connections in 8 threads deliver the same event at once: its effect happens exactly once", async () => {
    const results = await deliverConcurrently(Array.from({ length: 8 }, () => event(1)));
    expect(results.sort()).toEqual(["applied", ...Array(7).fill("duplicate")]);
    const db = open();
    expect(effects(db)).toEqual([{ event_id: "evt-1", sequence: 1 }]);
    db.close();
  });

  test("8 threads deliver sequences 1-8 at once: never an older one after a newer one, none twice", async () => {
    const results = await deliverConcurrently(Array.from({ length: 8 }, (_, i) => event(i + 1)));
    expect(results.every((r) => r === "applied" || r === "stale")).toBe(true);
    const db = open();
    const applied = effects(db).map((e) => e.sequence);
    // Whatever order the threads ran in, the applied sequences only go up, and 8 is among them
    // (nothing is newer, so nothing can make it stale).
    expect(applied).toEqual([...applied].sort((a, b) => a - b));
    expect(new Set(applied).size).toBe(applied.length);
    expect(applied.at(-1)).toBe(8);
    expect(results.filter((r) => r === "applied")).toHaveLength(applied.length);
    db.close();
  });
});

describe("the snippet files", () => {
  test("verify.ts imports nothing, so it can be pasted anywhere", () => {
    const source = readFileSync(new URL("../../src/receiver/verify.ts", import.meta.url), "utf8");
    expect(new Bun.Transpiler({ loader: "ts" }).scanImports(source)).toEqual([]);
  });

  test("verify.js keeps every comment of verify.ts", () => {
    const source = readFileSync(new URL("../../src/receiver/verify.ts", import.meta.url), "utf8");
    const built = readFileSync(new URL("../../src/receiver/verify.js", import.meta.url), "utf8");
    const texts = source
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => /^(\/\/|\/\*\*|\*)/.test(line))
      .map((line) =>
        line
          .replace(/^(\/\/|\/\*\*|\*\/|\*)\s?/, "")
          .replace(/\*\/$/, "")
          .trim(),
      )
      .filter(Boolean);
    expect(texts.length).toBeGreaterThan(40);
    expect(texts.filter((text) => !built.includes(text))).toEqual([]);
  });

  test("the build refuses a comment it would have to drop", () => {
    expect(() => buildSnippet("export const a = 1; // trailing\n")).toThrow("on its own line");
    expect(() => buildSnippet("export const o = {\n  // inside an object literal\n  a: 1,\n};\n")).toThrow(
      "object literal",
    );
  });

  test("verify.js is what scripts/build-snippet.ts makes of verify.ts today", () => {
    const source = readFileSync(new URL("../../src/receiver/verify.ts", import.meta.url), "utf8");
    const built = readFileSync(new URL("../../src/receiver/verify.js", import.meta.url), "utf8");
    expect(buildSnippet(source)).toBe(built);
  });
});
