// Builds src/receiver/verify.js from src/receiver/verify.ts: the same receiver snippet as plain
// ES module JavaScript with JSDoc types, for Node.js >= 20 (which cannot run TypeScript) and for
// receivers without a TypeScript build. `--check` exits 1 when the checked-in file is stale.
//
// Bun's transpiler erases the types but also drops every comment, and the comments are half of
// a snippet people paste. So, before transpiling:
// - interfaces and type aliases become JSDoc @typedef comments (with their members' docs);
// - functions get @template/@param/@returns tags made from their signatures, in their doc comment;
// - every comment that stands on its own line becomes a string statement, which the transpiler
//   keeps in place, and is turned back into the comment afterwards. Comments must therefore
//   sit where a statement could (not inside a class body or object literal) and not trail code:
//   the build fails otherwise instead of dropping them.
// Class fields and constructors get their JSDoc after transpiling. Last, the result is proven
// to be the same program: transpiled again, it must print exactly as the TypeScript source does.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dir, "..");
const sourcePath = join(root, "src/receiver/verify.ts");
const targetPath = join(root, "src/receiver/verify.js");
const HEADER = `// Generated from verify.ts by scripts/build-snippet.ts (npm run snippet:build). Do not edit:
// change verify.ts and rebuild. Same code, with the TypeScript types written as JSDoc.
// @ts-check
`;
const MARK = "__snippet_comment__:";

interface Comment {
  start: number;
  end: number;
}

/** Finds the comments of a TypeScript source, skipping strings and template literals (not regex literals). */
function findComments(text: string): Comment[] {
  const comments: Comment[] = [];
  // Each entry is what the scanner is inside: a template literal, or code whose `}` at depth 0
  // closes a template's `${`.
  const stack: ("template" | number)[] = [0];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    const top = stack[stack.length - 1];
    if (top === "template") {
      if (c === "\\") {
        i += 2;
      } else if (c === "`") {
        stack.pop();
        i++;
      } else if (c === "$" && text[i + 1] === "{") {
        stack.push(0);
        i += 2;
      } else {
        i++;
      }
      continue;
    }
    const next = text[i + 1];
    if (c === "/" && (next === "/" || next === "*")) {
      const close = next === "/" ? text.indexOf("\n", i) : text.indexOf("*/", i + 2) + 2;
      const end = close < (next === "/" ? 0 : 2) ? text.length : close;
      comments.push({ start: i, end });
      i = end;
    } else if (c === '"' || c === "'") {
      i++;
      while (i < text.length && text[i] !== c) i += text[i] === "\\" ? 2 : 1;
      i++;
    } else if (c === "`") {
      stack.push("template");
      i++;
    } else {
      if (c === "{") stack[stack.length - 1] = (top as number) + 1;
      if (c === "}") {
        if (top === 0 && stack.length > 1) stack.pop();
        else stack[stack.length - 1] = (top as number) - 1;
      }
      i++;
    }
  }
  return comments;
}

/** Replaces each own-line comment by string statements that survive transpiling; refuses trailing ones. */
function commentsToMarkers(text: string): string {
  let out = text;
  for (const { start, end } of findComments(text).reverse()) {
    const lineStart = text.lastIndexOf("\n", start - 1) + 1;
    const lineEnd = text.indexOf("\n", end) === -1 ? text.length : text.indexOf("\n", end);
    const line = text.slice(0, lineStart).split("\n").length;
    if (text.slice(lineStart, start).trim() || text.slice(end, lineEnd).trim()) {
      throw new Error(`verify.ts:${line}: put this comment on its own line, or verify.js would lose it`);
    }
    const indent = text.slice(lineStart, start);
    const lines = text
      .slice(start, end)
      .split("\n")
      .map((l, n) => (n === 0 || !l.startsWith(indent) ? l.trimStart() : l.slice(indent.length)));
    const markers = lines.map((l) => `${indent}"${MARK}${Buffer.from(l).toString("base64")}";`);
    out = out.slice(0, lineStart) + markers.join("\n") + out.slice(end);
  }
  return out;
}

/** Turns the string statements back into comments, indented as the transpiler indented the code. */
function markersToComments(js: string): string {
  const marker = new RegExp(`^(\\s*)"${MARK}([A-Za-z0-9+/=]*)";$`);
  return js
    .split("\n")
    .map((line) => {
      const match = marker.exec(line);
      return match ? match[1] + Buffer.from(match[2] ?? "", "base64").toString() : line;
    })
    .join("\n");
}

/** Splits at top-level commas (or `sep`), minding brackets and `=>`; drops empty parts. */
function splitTop(text: string, sep = ","): string[] {
  const parts: string[] = [];
  let depth = 0;
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if ("([{<".includes(c ?? "")) depth++;
    else if (")]}".includes(c ?? "") || (c === ">" && text[i - 1] !== "=")) depth--;
    else if (c === sep && depth === 0) {
      parts.push(text.slice(from, i));
      from = i + 1;
    }
  }
  parts.push(text.slice(from));
  return parts.map((p) => p.trim()).filter(Boolean);
}

/** Index of the bracket closing the one at `open`. */
function closing(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if ("([{<".includes(c ?? "")) depth++;
    else if (")]}".includes(c ?? "") || (c === ">" && text[i - 1] !== "=")) depth--;
    if (depth === 0) return i;
  }
  throw new Error(`unbalanced brackets in: ${text.slice(open, open + 60)}`);
}

const oneLine = (type: string) => type.replace(/\s+/g, " ").trim().replace(/^\| /, "");

/** @template tags for `<T, U = unknown, V extends X>`. */
function templates(generics: string): string[] {
  return splitTop(generics).map((g) => {
    const match = /^(\w+)(?:\s+extends\s+(.+?))?(?:\s*=\s*(.+))?$/.exec(g);
    if (!match) throw new Error(`cannot read type parameter ${g}`);
    const [, name, bound, fallback] = match;
    return `@template ${bound ? `{${oneLine(bound)}} ` : ""}${fallback ? `[${name}=${oneLine(fallback)}]` : name}`;
  });
}

/** @param tags for a parameter list. */
function params(list: string): string[] {
  return splitTop(list).map((p) => {
    const match = /^(\w+)(\?)?(?:\s*:\s*([\s\S]+?))?(?:\s*=\s*([^=>][\s\S]*))?$/.exec(p);
    if (!match) throw new Error(`cannot document parameter ${p} (destructure in the body instead)`);
    const [, name, optional, type, fallback] = match;
    const label = fallback ? `[${name}=${oneLine(fallback)}]` : optional ? `[${name}]` : name;
    return `@param {${type ? oneLine(type) : "*"}} ${label}`;
  });
}

/** Parses `name<G>(params): Return` starting at `from`; `end` is just after the return type. */
function signature(text: string, from: number) {
  let i = from;
  let generics = "";
  if (text[i] === "<") {
    const close = closing(text, i);
    generics = text.slice(i + 1, close);
    i = close + 1;
  }
  if (text[i] !== "(") throw new Error(`expected ( in: ${text.slice(from, from + 60)}`);
  const close = closing(text, i);
  const list = text.slice(i + 1, close);
  let end = close + 1;
  let returns = "";
  if (text[end] === ":") {
    // The return type ends at the body's `{` (or a member's `;`) outside any bracket.
    let depth = 0;
    let j = end + 1;
    for (; j < text.length; j++) {
      const c = text[j];
      if (depth === 0 && (c === "{" || c === ";")) break;
      if ("([<".includes(c ?? "")) depth++;
      else if (")]".includes(c ?? "") || (c === ">" && text[j - 1] !== "=")) depth--;
    }
    returns = text.slice(end + 1, j).trim();
    end = j;
  }
  return { generics, list, returns, end };
}

/** The text of a JSDoc block without its delimiters and leading stars. */
function docText(block: string): string[] {
  return block
    .replace(/^\/\*\*/, "")
    .replace(/\*\/$/, "")
    .split("\n")
    .map((l) => l.replace(/^\s*(\* ?)?/, "").trimEnd())
    .filter((l, n, all) => l || (n > 0 && n < all.length - 1));
}

const jsdoc = (lines: string[]) => ["/**", ...lines.map((l) => (l ? ` * ${l}` : " *")), " */"].join("\n");

/** A @typedef for `interface Name<G> { members }`. */
function interfaceTypedef(name: string, generics: string, body: string, doc: string[]): string {
  const tags: string[] = [...doc, ...(generics ? templates(generics) : []), `@typedef {object} ${name}`];
  // Walk the members: `/** doc */` then `name?: Type;` or `name<G>(params): Return;`.
  let rest = body.trimStart();
  let pendingDoc = "";
  for (; rest; rest = rest.trimStart()) {
    if (rest.startsWith("/**")) {
      const end = rest.indexOf("*/") + 2;
      pendingDoc = docText(rest.slice(0, end)).join(" ");
      rest = rest.slice(end);
      continue;
    }
    if (rest.startsWith("//")) throw new Error(`${name}: document members with /** */, not //`);
    const match = /^(?:readonly\s+)?(\w+)(\?)?/.exec(rest);
    if (!match) throw new Error(`cannot read member of ${name}: ${rest.slice(0, 60)}`);
    const [head, member, optional] = match;
    let type: string;
    let after = head.length;
    if (rest[after] === "<" || rest[after] === "(") {
      const sig = signature(rest, after);
      type = `${sig.generics ? `<${oneLine(sig.generics)}>` : ""}(${oneLine(sig.list).replace(/,\s*$/, "")}) => ${oneLine(sig.returns)}`;
      after = sig.end;
    } else {
      const colon = rest.indexOf(":", after);
      const semicolon = splitTop(rest.slice(colon + 1), ";")[0] ?? "";
      type = oneLine(semicolon);
      after = rest.indexOf(semicolon, colon) + semicolon.length;
    }
    tags.push(
      `@property {${type}} ${optional ? `[${member}]` : member}${pendingDoc ? ` ${pendingDoc}` : ""}`,
    );
    pendingDoc = "";
    rest = rest.slice(after).replace(/^\s*;/, "");
  }
  return jsdoc(tags);
}

interface ClassInfo {
  name: string;
  fields: { name: string; type: string }[];
  constructorTags: string[];
}

/** Rewrites the TypeScript source so that its types survive as JSDoc comments. */
function documentTypes(source: string, classes: ClassInfo[]): string {
  const lines = source.split("\n");
  const out: string[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] ?? "";
    const declaration = /^(export )?(async )?(function|interface|type|class) (\w+)/.exec(line);
    if (!declaration) {
      out.push(line);
      i++;
      continue;
    }
    const [, , , kind, name = ""] = declaration;
    // The declaration's own text, up to its closing line.
    let last = i;
    if (kind === "type") while (!lines[last]?.trimEnd().endsWith(";")) last++;
    else while (!(lines[last] ?? "").startsWith("}")) last++;
    const text = lines.slice(i, last + 1).join("\n");
    // Its doc comment (or `//` lines) just above, which the JSDoc block takes in.
    let doc: string[] = [];
    if (out[out.length - 1]?.trimEnd().endsWith("*/")) {
      let first = out.length - 1;
      while (!out[first]?.trimStart().startsWith("/**")) first--;
      doc = docText(out.slice(first).join("\n"));
      out.length = first;
    } else {
      let first = out.length;
      while (out[first - 1]?.startsWith("//")) first--;
      doc = out.slice(first).map((l) => l.replace(/^\/\/ ?/, ""));
      out.length = first;
    }
    const after = line.indexOf(name) + name.length;
    if (kind === "interface") {
      const open = text.indexOf("{", after);
      const generics = text[after] === "<" ? text.slice(after + 1, closing(text, after)) : "";
      out.push(interfaceTypedef(name, generics, text.slice(open + 1, closing(text, open)), doc));
    } else if (kind === "type") {
      const generics = text[after] === "<" ? text.slice(after + 1, closing(text, after)) : "";
      const type = oneLine(text.slice(text.indexOf("=", after) + 1).replace(/;\s*$/, ""));
      out.push(jsdoc([...doc, ...(generics ? templates(generics) : []), `@typedef {${type}} ${name}`]));
    } else if (kind === "function") {
      const sig = signature(text, after);
      const tags = [
        ...(sig.generics ? templates(sig.generics) : []),
        ...params(sig.list),
        ...(sig.returns ? [`@returns {${oneLine(sig.returns)}}`] : []),
      ];
      out.push(jsdoc(doc.length ? [...doc, ...tags] : tags), text);
    } else {
      const fields = [...text.matchAll(/^ {2}(?:readonly )?(\w+)\??: (.+);$/gm)].map((m) => ({
        name: m[1] ?? "",
        type: m[2] ?? "",
      }));
      const ctor = text.indexOf("\n  constructor");
      const constructorTags = ctor === -1 ? [] : params(signature(text, ctor + 14).list);
      classes.push({ name, fields, constructorTags });
      if (doc.length) out.push(jsdoc(doc));
      out.push(text);
    }
    i = last + 1;
  }
  return out.join("\n");
}

/** Adds @type to class fields and @param to constructors, which the marker trick cannot reach. */
function documentClasses(js: string, classes: ClassInfo[]): string {
  let out = js;
  for (const { name, fields, constructorTags } of classes) {
    const start = out.indexOf(`class ${name} `);
    const end = out.indexOf("\n}", start);
    let body = out.slice(start, end);
    for (const field of fields) {
      body = body.replace(
        new RegExp(`^( +)${field.name};$`, "m"),
        `$1/** @type {${field.type}} */\n$1${field.name};`,
      );
    }
    if (constructorTags.length) {
      body = body.replace(/^( +)constructor\(/m, (_, indent: string) => {
        const doc = jsdoc(constructorTags).replace(/\n/g, `\n${indent}`);
        return `${indent}${doc}\n${indent}constructor(`;
      });
    }
    out = out.slice(0, start) + body + out.slice(end);
  }
  return out;
}

/** Blank lines as in verify.ts: one before each top-level comment, none between it and its code. */
function tidy(js: string): string {
  const out: string[] = [];
  for (const line of js.split("\n")) {
    const previous = out[out.length - 1];
    if (!line.trim() && previous !== undefined && /^\s*(\/\/|\/\*\*|\*)/.test(previous)) continue;
    const opens = line.startsWith("/**") || (line.startsWith("//") && !previous?.startsWith("//"));
    if (opens && previous?.trim()) out.push("");
    out.push(line);
  }
  return `${out.join("\n").trim()}\n`;
}

/** The transpiler prints compactly (`new Map;`, bodies of `if` on the next line): format as the repo does. */
function format(js: string): string {
  const biome = Bun.spawnSync(
    [join(root, "node_modules/.bin/biome"), "format", "--stdin-file-path=verify.js"],
    {
      cwd: root,
      stdin: new TextEncoder().encode(js),
    },
  );
  if (biome.exitCode !== 0) throw new Error(`biome format failed: ${biome.stderr.toString()}`);
  return biome.stdout.toString();
}

export function buildSnippet(source: string): string {
  const classes: ClassInfo[] = [];
  const marked = commentsToMarkers(documentTypes(source, classes));
  let transpiled: string;
  try {
    transpiled = new Bun.Transpiler({ loader: "ts", deadCodeElimination: false }).transformSync(marked);
  } catch (error) {
    throw new Error(
      "verify.ts did not transpile with its comments as statements: is a comment inside a class body " +
        `or an object literal? Move it to the doc comment above. (${error})`,
    );
  }
  const js = format(`${HEADER}\n${tidy(documentClasses(markersToComments(transpiled), classes))}`);
  // The proof that the comments and JSDoc changed nothing: the same program, printed alike.
  const fromTs = new Bun.Transpiler({ loader: "ts" }).transformSync(source);
  const fromJs = new Bun.Transpiler({ loader: "js" }).transformSync(js);
  if (fromTs !== fromJs) throw new Error("verify.js would not be the same program as verify.ts");
  return js;
}

if (import.meta.main) {
  const js = buildSnippet(readFileSync(sourcePath, "utf8"));
  if (process.argv.includes("--check")) {
    if (!existsSync(targetPath) || readFileSync(targetPath, "utf8") !== js) {
      console.error("src/receiver/verify.js is stale: run `npm run snippet:build` and commit it.");
      process.exit(1);
    }
    console.log("src/receiver/verify.js is current");
  } else {
    writeFileSync(targetPath, js);
    console.log("wrote src/receiver/verify.js");
    // @outboxd/client ships the snippet as its /receiver (its committed dist/): rebuilt with it.
    Bun.spawnSync(["node", join(root, "clients/typescript/scripts/build.mjs")], {
      stdio: ["ignore", "inherit", "inherit"],
    });
  }
}
