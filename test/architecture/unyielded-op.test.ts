// The lint check (lint/unyielded-op.grit, a Biome GritQL plugin run by `biome ci`) that a
// storage helper is never called without `yield*`: such a call returns a generator nobody runs,
// so its statement silently never happens. Proven on a temporary file under test/, where the
// plugin applies, with the repository's own Biome configuration.
import { afterEach, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "../..");
const BIOME = join(ROOT, "node_modules/.bin/biome");
let file: string | undefined;

afterEach(() => {
  if (file) rmSync(file, { force: true });
  file = undefined;
});

function lint(body: string): { code: number; output: string } {
  file = join(import.meta.dir, `unyielded-fixture-${crypto.randomUUID()}.ts`);
  writeFileSync(
    file,
    `import { all, type Op, run } from "../../src/db/op.ts";\n\nexport function* op(): Op<number> {\n${body}\n}\n`,
  );
  const run = Bun.spawnSync([BIOME, "lint", "--colors=off", file], { cwd: ROOT });
  return { code: run.exitCode, output: run.stdout.toString() + run.stderr.toString() };
}

test("a storage helper called without yield* fails the lint, naming the fix", () => {
  const { code, output } = lint(
    '  run("DELETE FROM deliveries");\n  return (yield* all("SELECT 1")).length;',
  );
  expect(output).toContain("plugin");
  expect(output).toContain("does nothing unless yielded");
  expect(code).not.toBe(0);
});

test("yielded, the same operation passes", () => {
  const { code, output } = lint(
    '  yield* run("DELETE FROM deliveries");\n  return (yield* all("SELECT 1")).length;',
  );
  expect(output).not.toContain("does nothing unless yielded");
  expect(code).toBe(0);
});
