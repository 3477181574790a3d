// One JSON line per log entry on stderr. Never pass a token, secret or payload body here.
export type Level = "debug" | "info" | "warn" | "error";
const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  log(level: Level, msg: string, fields?: Record<string, unknown>): void;
  enabled(level: Level): boolean;
}

export function createLogger(
  minimum: Level,
  write: (line: string) => void = (l) => process.stderr.write(l),
): Logger {
  const enabled = (level: Level) => ORDER[level] >= ORDER[minimum];
  return {
    enabled,
    log(level, msg, fields = {}) {
      if (!enabled(level)) return;
      write(`${JSON.stringify({ level, time: new Date().toISOString(), msg, ...fields })}\n`);
    },
  };
}
