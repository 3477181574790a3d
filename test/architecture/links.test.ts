// Every relative link in the documentation leads somewhere: the file exists and, for a
// `#anchor` into a Markdown file, a heading of that file has that GitHub-style slug. A link
// to a moved or renamed page fails here instead of in a reader's browser.
import { expect, test } from "bun:test";
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { Glob } from "bun";

const ROOT = resolve(import.meta.dir, "../..");

const PAGES = [
  "README.md",
  "clients/typescript/README.md",
  "docs/*.md",
  "docs/decisions/*.md",
  "bench/**/*.md",
];
const SKIP = /(^|\/)(node_modules|results)\//;

function pages(): string[] {
  const found = new Set<string>();
  for (const pattern of PAGES) {
    for (const path of new Glob(pattern).scanSync({ cwd: ROOT })) if (!SKIP.test(path)) found.add(path);
  }
  return [...found].sort();
}

/** Text outside fenced code blocks, where a heading is a heading. */
function unfenced(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
}

/** Text outside fenced code blocks and inline code, where a link is a link. */
function prose(markdown: string): string {
  return unfenced(markdown).replace(/`[^`\n]*`/g, "");
}

/** The targets of inline links and images, `[text](target)`, and of reference definitions. */
export function linkTargets(markdown: string): string[] {
  const text = prose(markdown);
  const targets: string[] = [];
  for (const m of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) targets.push(m[1] as string);
  for (const m of text.matchAll(/^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/gm))
    targets.push(m[1] as string);
  return targets;
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  return heading
    .replace(/`/g, "")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** The anchors a Markdown file offers: its headings' slugs, repeats numbered as GitHub does. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const m of unfenced(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slug(m[1] as string);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  for (const m of markdown.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) result.add(m[1] as string);
  return result;
}

function isExternal(target: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//");
}

test("every relative link in the docs and READMEs resolves to a file and, with #anchor, to a heading", () => {
  const broken: string[] = [];
  for (const page of pages()) {
    const markdown = readFileSync(join(ROOT, page), "utf8");
    for (const target of linkTargets(markdown)) {
      if (isExternal(target)) continue;
      const [rawPath = "", anchor] = target.split("#", 2);
      const path = decodeURIComponent(rawPath);
      const file = path === "" ? join(ROOT, page) : resolve(dirname(join(ROOT, page)), path);
      if (!file.startsWith(ROOT) || !existsSync(file)) {
        broken.push(`${page}: ${target} (no such file)`);
        continue;
      }
      if (anchor && file.endsWith(".md") && statSync(file).isFile()) {
        if (!anchors(readFileSync(file, "utf8")).has(decodeURIComponent(anchor).toLowerCase())) {
          broken.push(`${page}: ${target} (no such heading)`);
        }
      }
    }
  }
  expect(broken).toEqual([]);
});

test("the link reader finds links and slugs headings as GitHub does", () => {
  expect(linkTargets('See [a](docs/a.md#b), ![i](x.png "t") and `[no](c.md)`.\n[r]: ./d.md\n')).toEqual([
    "docs/a.md#b",
    "x.png",
    "./d.md",
  ]);
  expect(linkTargets("```\n[no](e.md)\n```\n")).toEqual([]);
  expect(slug("8. Operations")).toBe("8-operations");
  expect(slug("Commits and records")).toBe("commits-and-records");
  expect(slug("`OUTBOXD_LEASE` — what it costs")).toBe("outboxd_lease--what-it-costs");
  expect(slug("The ledger: record history and a tamper-evident chain")).toBe(
    "the-ledger-record-history-and-a-tamper-evident-chain",
  );
});
