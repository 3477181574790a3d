// Configuration errors: a malformed OUTBOXD_DATABASE_URL is reported
// without its credentials, by the real executable's start-up; every on/off setting reads the
// same words, exactly those docs/configuration.md lists; and the limits of DESIGN §3 are validated
// at start like every other setting.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { BOOLEAN_SETTINGS, ConfigError, loadConfig } from "../../src/config.ts";
import { REPO } from "../helpers/process.ts";

const PASSWORD = "hunter2-do-not-print";

describe("a malformed OUTBOXD_DATABASE_URL", () => {
  const urls = [
    `postgres://admin:${PASSWORD}@db.internal/outboxd`,
    `libsql://admin:${PASSWORD}@[not-a-host`,
    `libsql://db.example.com?authToken=${PASSWORD}&unknown=1`,
    `https://admin:${PASSWORD}@db example.com/`,
  ];
  test.each(urls)("%s: refused at start (exit 2), its credentials never printed", (url) => {
    const run = Bun.spawnSync([process.execPath, "src/main.ts", "serve"], {
      cwd: REPO,
      env: { PATH: process.env.PATH ?? "", OUTBOXD_DATABASE_URL: url, PORT: "0" },
    });
    const output = run.stdout.toString() + run.stderr.toString();
    expect(output).toContain("OUTBOXD_DATABASE_URL");
    expect(output).not.toContain(PASSWORD);
    expect(run.exitCode).toBe(2);
  });
});

describe("on/off settings", () => {
  const config = (name: string, value: string) => loadConfig({ [name]: value, OUTBOXD_FAILPOINTS: "" });

  test.each([...BOOLEAN_SETTINGS])("%s takes exactly 1/true (on) and 0/false (off)", (name) => {
    const key = {
      OUTBOXD_ALLOW_PRIVATE_ENDPOINTS: "allowPrivateEndpoints",
      OUTBOXD_METRICS_PUBLIC: "metricsPublic",
    }[name as string] as "allowPrivateEndpoints" | "metricsPublic" | undefined;
    for (const on of ["1", "true"]) {
      const loaded = config(name, on);
      if (key) expect(loaded[key]).toBe(true);
    }
    for (const off of ["0", "false"]) {
      const loaded = config(name, off);
      if (key) expect(loaded[key]).toBe(false);
    }
    for (const other of ["yes", "on", "TRUE", "True", "2", "enabled"]) {
      expect(() => config(name, other)).toThrow(ConfigError);
    }
  });

  test("OUTBOXD_ALLOW_FAILPOINTS=true allows failpoints, as the docs say", () => {
    expect(
      loadConfig({ OUTBOXD_FAILPOINTS: "commit.after_commit", OUTBOXD_ALLOW_FAILPOINTS: "true" }).failpoints,
    ).toEqual(["commit.after_commit"]);
    expect(() =>
      loadConfig({ OUTBOXD_FAILPOINTS: "commit.after_commit", OUTBOXD_ALLOW_FAILPOINTS: "yes" }),
    ).toThrow(ConfigError);
  });

  test("docs/configuration.md documents every on/off setting with the same words", () => {
    const docs = readFileSync(`${REPO}/docs/configuration.md`, "utf8");
    for (const name of BOOLEAN_SETTINGS) {
      const row = docs.split("\n").find((line) => line.startsWith(`| \`${name}\``));
      expect(row).toContain("`1`/`true`");
    }
  });
});

describe("the commit and pattern limits are validated at start", () => {
  test.each([
    ["OUTBOXD_MAX_PATTERN_LENGTH", "0"],
    ["OUTBOXD_MAX_PATTERNS_PER_ENDPOINT", "many"],
    ["OUTBOXD_MAX_DELIVERIES_PER_COMMIT", "-5"],
    ["OUTBOXD_MAX_DELIVER_AFTER", "30 days"],
  ])("%s=%s is refused", (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(name);
  });

  test("the defaults", () => {
    expect(loadConfig({})).toMatchObject({
      maxPatternLength: 256,
      maxPatternsPerEndpoint: 100,
      maxDeliveriesPerCommit: 10_000,
      maxDeliverAfterMs: 30 * 86_400_000,
    });
  });
});
