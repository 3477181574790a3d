// The dependency rules (.dependency-cruiser.cjs) run on src/ in CI; here they are run
// on small temporary source trees that break one rule each, to prove a wrong import fails the
// check and names the rule, and on the real src/, which must pass.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { tempDir } from "../helpers/server.ts";

const ROOT = resolve(import.meta.dir, "../..");
const CONFIG = join(ROOT, ".dependency-cruiser.cjs");
const DEPCRUISE = join(ROOT, "node_modules/.bin/depcruise");
const dirs: string[] = [];

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function depcruise(cwd: string): { code: number; output: string } {
  const run = Bun.spawnSync([DEPCRUISE, "src", "--config", CONFIG, "--output-type", "err"], { cwd });
  return { code: run.exitCode, output: run.stdout.toString() + run.stderr.toString() };
}

/** A tree of files (path → content) with the repository's tsconfig. */
function tree(files: Record<string, string>): string {
  const dir = tempDir("outboxd-deps-");
  dirs.push(dir);
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({ compilerOptions: { allowImportingTsExtensions: true } }),
  );
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  return dir;
}

describe("dependency rules", () => {
  test("the real src/ passes", () => {
    const { code, output } = depcruise(ROOT);
    expect(output).toContain("no dependency violations found");
    expect(code).toBe(0);
  });

  const cases: [rule: string, files: Record<string, string>][] = [
    [
      "domain-uses-no-edge",
      {
        "src/http/schemas.ts": "export const CommitSchema = 1;\n",
        "src/commit/normalize.ts":
          'import { CommitSchema } from "../http/schemas.ts";\nexport const x = CommitSchema;\n',
      },
    ],
    [
      "base-uses-no-domain",
      {
        "src/config.ts": "export interface Config { url: string }\n",
        "src/db/open.ts":
          'import type { Config } from "../config.ts";\nexport const c: Config | null = null;\n',
      },
    ],
    [
      "receiver-imports-nothing",
      {
        "src/lib/time.ts": "export const iso = 1;\n",
        "src/receiver/verify.ts": 'import { iso } from "../lib/time.ts";\nexport const x = iso;\n',
      },
    ],
    [
      "deliveries-owns-its-table",
      {
        "src/commit/op.ts": "export const commitOp = 1;\n",
        "src/deliveries/enqueue.ts":
          'import { commitOp } from "../commit/op.ts";\nexport const x = commitOp;\n',
      },
    ],
    [
      "no-circular",
      {
        "src/endpoints/a.ts": 'import { b } from "../commit/b.ts";\nexport const a = () => b;\n',
        "src/commit/b.ts": 'import { a } from "../endpoints/a.ts";\nexport const b = () => a;\n',
      },
    ],
  ];
  for (const [rule, files] of cases) {
    test(`a wrong import fails with the rule's name: ${rule}`, () => {
      const { code, output } = depcruise(tree(files));
      expect(output).toContain(`error ${rule}:`);
      expect(code).not.toBe(0);
    });
  }
});
