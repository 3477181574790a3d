// Builds the `outboxd` executable (npm run build → dist/outboxd): src/main.ts, Bun itself, the
// embedded migrations (src/db/migrations.gen.ts) and the libSQL native module, in one file that
// runs on a machine without node_modules. Usage: bun scripts/build.ts [--outfile PATH]
//
// The native module needs help. The `libsql` package picks its native package at run time with
// `require(\`@libsql/${target}\`)`, which no bundler can follow, so the executable would look
// for node_modules/@libsql/<target> where it runs and fail. The plugin below rewrites that one
// `require` into a static one for the platform the build runs on, and Bun then embeds the
// package's `index.node` (loaded from memory via a temp file at run time). The executable is
// therefore for this platform only (e.g. linux-x64 with glibc): build it where it will run, or
// in the same kind of image (see Dockerfile).
import { readFileSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import type { BunPlugin } from "bun";

const root = join(import.meta.dir, "..");
const requireFromRoot = createRequire(join(root, "package.json"));
const libsqlIndex = requireFromRoot.resolve("libsql");
const requireFromLibsql = createRequire(libsqlIndex);

/** The `@libsql/<target>` native package for this machine, chosen as libsql's index.js does. */
export function libsqlTarget(): string {
  const { platform, arch } = process;
  if (platform === "linux") {
    if (arch === "arm") return "linux-arm-gnueabihf";
    // detect-libc (a dependency of libsql) reads the C library the machine has; Bun's own
    // process.report claims musl on glibc systems, which is why libsql corrects for it too.
    const { familySync, GLIBC } = requireFromLibsql("detect-libc") as {
      familySync(): string | null;
      GLIBC: string;
    };
    return `linux-${arch}-${familySync() === GLIBC ? "gnu" : "musl"}`;
  }
  if (platform === "darwin") return `darwin-${arch}`;
  if (platform === "win32") return `win32-${arch}-msvc`;
  throw new Error(`no libsql native package for ${platform}-${arch}`);
}

/** The one line of libsql/index.js that the plugin replaces (its source text, not a template). */
// biome-ignore lint/suspicious/noTemplateCurlyInString: this is libsql's source text, matched as is
const DYNAMIC_REQUIRE = "return require(`@libsql/${target}`);";

/** `import name from "…" with { type: "text" };`: a text import, as src writes them. */
const TEXT_IMPORT = /^import (\w+) from "([^"]+)" with \{ type: "text" \};$/gm;

/**
 * Text imports become string literals. Bun's bundler gives a file one loader: a file imported as
 * text by one module and as code by another (the receiver snippet: served as text by
 * src/http/routes/snippet.ts, run by `outboxd listen`) fails the build ("No matching export …
 * for import default"). Running from source, both kinds of import work as they are.
 */
export function inlineTextImports(): BunPlugin {
  return {
    name: "inline-text-imports",
    setup(build) {
      build.onLoad({ filter: /[\\/]src[\\/].*\.ts$/ }, async ({ path }) => {
        const source = await Bun.file(path).text();
        if (!source.includes('with { type: "text" }')) return undefined;
        const contents = source.replace(TEXT_IMPORT, (_line, name: string, specifier: string) => {
          const text = readFileSync(join(dirname(path), specifier), "utf8");
          return `const ${name} = ${JSON.stringify(text)};`;
        });
        return { contents, loader: "ts" };
      });
    },
  };
}

export function embedLibsqlNative(target: string, rewritten: (path: string) => void): BunPlugin {
  const nativePackage = `@libsql/${target}`;
  // Fail here, not in the executable, when the native package for this platform is missing.
  const nativeFile = requireFromLibsql.resolve(nativePackage);
  return {
    name: "embed-libsql-native",
    setup(build) {
      build.onLoad({ filter: /[\\/]node_modules[\\/]libsql[\\/]index\.js$/ }, async ({ path }) => {
        const source = await Bun.file(path).text();
        if (!source.includes(DYNAMIC_REQUIRE)) {
          throw new Error(
            `${path} no longer contains ${DYNAMIC_REQUIRE}: the libsql package changed, update scripts/build.ts`,
          );
        }
        // Only the native package's name becomes static; the `target` computed above it is unused.
        const contents = source.replace(
          DYNAMIC_REQUIRE,
          `return require(${JSON.stringify(nativePackage)}); // rewritten by scripts/build.ts`,
        );
        console.error(`embedding ${relative(root, nativeFile)}`);
        rewritten(path);
        return { contents, loader: "js" };
      });
    },
  };
}

export async function build(outfile: string): Promise<{ outfile: string; bytes: number; ms: number }> {
  const started = performance.now();
  const rewrites: string[] = [];
  const result = await Bun.build({
    // The workers' entry points too (the WAL checkpoints, the writer thread: checkpointer.ts,
    // db/writer-thread.ts): the executable starts them by the names they have beside main.ts
    // inside it (hence [name], without their directories).
    entrypoints: [
      join(root, "src/main.ts"),
      join(root, "src/db/checkpoint-worker.ts"),
      join(root, "src/db/writer-worker-main.ts"),
    ],
    naming: { entry: "[name].[ext]" },
    target: "bun",
    // Names are kept so stack traces read as code; the source map travels inside the executable.
    minify: { whitespace: true, syntax: true, identifiers: false },
    sourcemap: "inline",
    // The code travels precompiled to JavaScriptCore bytecode (ESM: main.ts awaits at top level):
    // parsing the bundle at every start took ~40% of the cold start (~90 of ~220 ms to /readyz).
    bytecode: true,
    format: "esm",
    plugins: [embedLibsqlNative(libsqlTarget(), (path) => rewrites.push(path)), inlineTextImports()],
    compile: {
      outfile,
      // Configuration is environment variables only: a .env or bunfig.toml in whatever
      // directory the executable is started from must not change what it does.
      autoloadDotenv: false,
      autoloadBunfig: false,
    },
  });
  if (!result.success) {
    throw new AggregateError(result.logs, `build failed:\n${result.logs.map(String).join("\n")}`);
  }
  // An executable without the native module builds fine and fails only when it opens a database.
  if (rewrites.length !== 1) {
    throw new Error(`expected to rewrite libsql/index.js once, rewrote: ${JSON.stringify(rewrites)}`);
  }
  // Bun also writes the map beside the executable; the copy inside it is the one that is used.
  rmSync(`${outfile}.map`, { force: true });
  return { outfile, bytes: statSync(outfile).size, ms: Math.round(performance.now() - started) };
}

if (import.meta.main) {
  const i = process.argv.indexOf("--outfile");
  const outfile = resolve(i === -1 ? join(root, "dist/outboxd") : (process.argv[i + 1] ?? ""));
  const built = await build(outfile);
  console.error(
    `built ${relative(process.cwd(), built.outfile) || built.outfile} ` +
      `(${(built.bytes / 1024 / 1024).toFixed(1)} MiB, ${libsqlTarget()}) in ${built.ms} ms`,
  );
}
