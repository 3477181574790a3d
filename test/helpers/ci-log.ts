// What a failing test keeps for CI's last lines. CI shows only the tail of its output, where a
// failure's own printout, long scrolled past, never appears: .ci/run sets OUTBOXD_CI_LOG_DIR and
// prints the files kept there after the test run fails.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Prints `text` and, under CI, keeps it in a file named after `name` for .ci/run to print last. */
export function keepForCi(name: string, text: string): void {
  console.error(text);
  const dir = process.env.OUTBOXD_CI_LOG_DIR;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${name.replace(/[^a-z0-9-]+/gi, "-")}.log`), text);
}
