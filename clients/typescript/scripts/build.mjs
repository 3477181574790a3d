// Builds dist/ for `npm pack` (run by prepack): the client compiled by TypeScript (ESM + .d.ts),
// and the receiver snippet as `@outboxd/client/receiver`: the repository's one snippet
// (src/receiver/verify.ts, served at /snippet/verify.js) copied in as it is, not rewritten.
// Needs only this package's devDependencies: `npm ci` here, then `npm pack`.
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = join(dirname(fileURLToPath(import.meta.url)), "..");
const snippet = join(here, "../../src/receiver");
const tsc = createRequire(join(here, "package.json")).resolve("typescript/bin/tsc");
const dist = join(here, "dist");

rmSync(dist, { recursive: true, force: true });
execFileSync(process.execPath, [tsc, "-p", join(here, "tsconfig.build.json")], { stdio: "inherit" });

// The receiver: its JavaScript as served, its declarations from the TypeScript it is built from.
copyFileSync(join(snippet, "verify.js"), join(dist, "receiver.js"));
const types = mkdtempSync(join(tmpdir(), "outboxd-receiver-types-"));
try {
  // A throwaway project (a tsconfig, so that `types: []` keeps ambient packages out).
  const project = join(types, "tsconfig.json");
  writeFileSync(
    project,
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        module: "ESNext",
        moduleResolution: "Bundler",
        lib: ["ES2022", "DOM"],
        types: [],
        strict: true,
        skipLibCheck: true,
        declaration: true,
        emitDeclarationOnly: true,
        rootDir: snippet,
        outDir: types,
      },
      files: [join(snippet, "verify.ts")],
    }),
  );
  execFileSync(process.execPath, [tsc, "-p", project], { stdio: "inherit" });
  copyFileSync(join(types, "verify.d.ts"), join(dist, "receiver.d.ts"));
} finally {
  rmSync(types, { recursive: true, force: true });
}
console.error(`built ${readdirSync(dist).sort().join(", ")}`);
