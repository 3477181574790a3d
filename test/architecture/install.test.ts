// The root install is what a newcomer runs first (`npm ci`): every package it installs accepts
// this machine's Node.js (npm would warn EBADENGINE otherwise), the bench's own packages stay in
// bench/package.json, and every install script npm runs is approved (no "not yet covered" warning).
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO } from "../helpers/process.ts";

interface LockEntry {
  engines?: { node?: string };
  optional?: boolean;
  hasInstallScript?: boolean;
}
const lock = JSON.parse(readFileSync(join(REPO, "package-lock.json"), "utf8")) as {
  packages: Record<string, LockEntry>;
};
const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8"));

type Version = [number, number, number];
const parse = (text: string): Version => {
  const [a = 0, b = 0, c = 0] = text.replace(/^v/, "").split(".").map(Number);
  return [a, b, c];
};
const compare = (x: Version, y: Version) => x[0] - y[0] || x[1] - y[1] || x[2] - y[2];

/** The engines ranges npm packages write: `>=X.Y`, `^X.Y`, `X`, joined by `||`. */
function accepts(range: string, version: Version): boolean {
  return range.split("||").some((alternative) => {
    const text = alternative.trim();
    const caret = /^\^\s*([\d.]+)$/.exec(text);
    if (caret) {
      const low = parse(caret[1] as string);
      return version[0] === low[0] && compare(version, low) >= 0;
    }
    const atLeast = /^>=\s*([\d.]+)$/.exec(text);
    if (atLeast) return compare(version, parse(atLeast[1] as string)) >= 0;
    if (/^\d+$/.test(text)) return version[0] === Number(text);
    throw new Error(`an engines range this test does not read: ${range}`);
  });
}

test("every package of the root install accepts this machine's Node.js (no EBADENGINE)", () => {
  const node = parse(Bun.spawnSync(["node", "--version"]).stdout.toString().trim());
  const refused = Object.entries(lock.packages)
    .filter(([name, entry]) => name !== "" && !entry.optional && entry.engines?.node !== undefined)
    .filter(([, entry]) => !accepts(entry.engines?.node as string, node))
    .map(([name, entry]) => `${name} wants node ${entry.engines?.node}`);
  expect(refused).toEqual([]);
});

test("the bench's packages are not in the root install", () => {
  for (const name of ["pg", "pg-boss", "autocannon"]) {
    expect(lock.packages[`node_modules/${name}`]).toBeUndefined();
  }
  const bench = JSON.parse(readFileSync(join(REPO, "bench/package.json"), "utf8"));
  expect(Object.keys(bench.dependencies).sort()).toEqual(["autocannon", "pg", "pg-boss"]);
});

test("every install script of the root install is approved or denied in allowScripts", () => {
  const uncovered = Object.entries(lock.packages)
    .filter(([name, entry]) => name !== "" && entry.hasInstallScript && !entry.optional)
    .map(([name]) => name.slice(name.lastIndexOf("node_modules/") + "node_modules/".length))
    .filter((name) => !(name in pkg.allowScripts));
  expect(uncovered).toEqual([]);
});
