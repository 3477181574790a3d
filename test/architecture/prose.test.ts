// The project's prose speaks of the product as it is now: code comments, tests, docs, bench
// scripts and READMEs name no past working stretches, people or tracker numbers (history lives
// in git).
// The words are assembled from pieces so that this file does not match itself.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Glob } from "bun";

const ROOT = resolve(import.meta.dir, "../..");

const HISTORY = new RegExp(
  [
    String.raw`\bsess` + String.raw`ions? \d+`,
    String.raw`\bengin` + String.raw`eers?\b`,
    String.raw`\biss` + String.raw`ues? #?\d+`,
    String.raw`\bthe le` + String.raw`ad\b`,
    String.raw`\bwork per` + String.raw`iods?\b`,
  ].join("|"),
  "i",
);

const FOLDERS = ["src", "test", "docs", "bench", "scripts", "clients", "lint", ".ci"];
const SKIP = /(^|\/)(node_modules|dist)\//;

function* files(): Generator<string> {
  yield "README.md";
  for (const folder of FOLDERS) {
    for (const path of new Glob(`${folder}/**/*`).scanSync({ cwd: ROOT, dot: true })) {
      if (!SKIP.test(path) && !path.endsWith(".json")) yield path;
    }
  }
}

test("no line in code, tests, docs or bench speaks of how the work was done", () => {
  const offenders: string[] = [];
  for (const path of files()) {
    const lines = readFileSync(join(ROOT, path), "utf8").split("\n");
    lines.forEach((line, index) => {
      if (HISTORY.test(line)) offenders.push(`${path}:${index + 1}: ${line.trim().slice(0, 120)}`);
    });
  }
  expect(offenders).toEqual([]);
});

test("the scan recognises each kind of history word", () => {
  const samples = [
    ["as measured in sess", "ion 12"],
    ["the writer engin", "eer's branch"],
    ["fixed for iss", "ue 36"],
    ["the le", "ad's quiet run"],
    ["a past work per", "iod"],
  ].map((parts) => parts.join(""));
  for (const sample of samples) expect(HISTORY.test(sample)).toBe(true);
  expect(HISTORY.test("each session of the dashboard; an issue with the receiver")).toBe(false);
});
