// Builds dist/, which is committed: `npm install <repo>/clients/typescript` links this folder
// and runs no build, so dist/ must be there and complete. It holds the client compiled by
// TypeScript (ESM + .d.ts); its one runtime dependency, openapi-fetch, copied in under
// dist/vendor/ (a linked folder gets no dependencies installed) with its licence; and the
// receiver snippet as `@outboxd/client/receiver`: the repository's one snippet
// (src/receiver/verify.ts, served at /snippet/verify.js) copied in as it is, not rewritten.
// Needs only this package's devDependencies (`npm ci` here). `--check` builds into a temporary
// folder and fails when the committed dist/ differs (CI: .ci/run).
import { execFileSync } from "node:child_process";
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = join(dirname(fileURLToPath(import.meta.url)), "..");
const snippet = join(here, "../../src/receiver");
const tsc = createRequire(join(here, "package.json")).resolve("typescript/bin/tsc");
const check = process.argv.includes("--check");
const dist = check ? mkdtempSync(join(tmpdir(), "outboxd-client-dist-")) : join(here, "dist");

rmSync(dist, { recursive: true, force: true });
execFileSync(process.execPath, [tsc, "-p", join(here, "tsconfig.build.json"), "--outDir", dist], {
  stdio: "inherit",
});

// openapi-fetch (runtime and types) and the types it imports, under dist/vendor/.
const modules = join(here, "node_modules");
const vendor = join(dist, "vendor");
mkdirSync(vendor);
const vendored = (from, to, rewrite = (text) => text) =>
  writeFileSync(join(vendor, to), rewrite(readFileSync(join(modules, from), "utf8")));
vendored("openapi-fetch/dist/index.mjs", "openapi-fetch.js", (text) =>
  text.replace(/\n\/\/# sourceMappingURL=.*\n?$/, "\n"),
);
vendored("openapi-fetch/dist/index.d.ts", "openapi-fetch.d.ts", (text) =>
  text.replaceAll("'openapi-typescript-helpers'", "'./openapi-typescript-helpers.js'"),
);
vendored("openapi-typescript-helpers/dist/index.d.ts", "openapi-typescript-helpers.d.ts");
vendored("openapi-fetch/LICENSE", "openapi-fetch.LICENSE");
vendored("openapi-typescript-helpers/LICENSE", "openapi-typescript-helpers.LICENSE");
for (const file of readdirSync(dist)) {
  if (!/\.(js|d\.ts)$/.test(file)) continue;
  const path = join(dist, file);
  const text = readFileSync(path, "utf8");
  writeFileSync(path, text.replaceAll('from "openapi-fetch"', 'from "./vendor/openapi-fetch.js"'));
}

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
if (check) {
  const stale = differences(dist, join(here, "dist"));
  rmSync(dist, { recursive: true, force: true });
  if (stale.length > 0) {
    console.error(
      `clients/typescript/dist is stale (${stale.join(", ")}): run \`node clients/typescript/scripts/build.mjs\` and commit dist/`,
    );
    process.exit(1);
  }
  console.error("clients/typescript/dist is current");
} else {
  console.error(`built ${readdirSync(dist).sort().join(", ")}`);
}

/** The files that differ between two folders, or exist in one only. */
function differences(a, b, prefix = "") {
  const names = new Set([...list(a), ...list(b)]);
  const out = [];
  for (const name of [...names].sort()) {
    const [left, right] = [join(a, name), join(b, name)];
    const [l, r] = [kind(left), kind(right)];
    if (l === "dir" && r === "dir") out.push(...differences(left, right, `${prefix}${name}/`));
    else if (l !== r || (l === "file" && !readFileSync(left).equals(readFileSync(right))))
      out.push(`${prefix}${name}`);
  }
  return out;
}
function list(dir) {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}
function kind(path) {
  try {
    return statSync(path).isDirectory() ? "dir" : "file";
  } catch {
    return "none";
  }
}
