/** A command-line mistake: printed without a stack trace, exit code 2. */
export class UsageError extends Error {}

/** A failure its message explains in full (a busy port): printed as one line, exit code 1. */
export class CommandError extends Error {}

/** The value after `--name`, or undefined when the option is absent. */
export function option(args: string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  if (i === -1) return undefined;
  const value = args[i + 1];
  if (value === undefined || value.startsWith("--")) throw new UsageError(`--${name} needs a value`);
  return value;
}

/** An http(s) base URL given as `--url` (the commands that call an outboxd's HTTP API). */
export function httpBaseUrl(value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--url ${value} is not a URL`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new UsageError("--url must be http(s)://");
  return url;
}

/** Progress on stderr: a redrawn bar on a terminal, a line per step elsewhere (logs, CI). */
export function progress(
  label: string,
  total: number,
): { update(done: number): void; end(done: number): void } {
  const tty = process.stderr.isTTY === true;
  let lastLine = Date.now();
  const draw = (done: number) => {
    const width = 30;
    const filled = total === 0 ? width : Math.min(width, Math.round((done / total) * width));
    return `${label} [${"#".repeat(filled)}${".".repeat(width - filled)}] ${done}/${total}`;
  };
  return {
    update(done) {
      if (tty) process.stderr.write(`\r${draw(done)}`);
      else if (Date.now() - lastLine > 1000) {
        lastLine = Date.now();
        process.stderr.write(`${draw(done)}\n`);
      }
    },
    end(done) {
      process.stderr.write(tty ? `\r${draw(done)}\n` : `${draw(done)}\n`);
    },
  };
}
