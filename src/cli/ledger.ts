// `outboxd verify` and `outboxd erase` (DESIGN §13, docs/ledger.md).
import { type EraseOutcome, eraseEventPayload, eraseVersion } from "../ledger/erase.ts";
import { hashAt } from "../ledger/history.ts";
import { verifyLedger } from "../ledger/verify.ts";
import { option, UsageError } from "./args.ts";
import { withDatabase } from "./database.ts";

/**
 * Exit 0 with `ok: <n> commits, head <hash>` (then what is outside the chain or erased), or exit
 * 1 naming the first commit that does not add up. `--anchor SEQ:HASH` also checks that the chain
 * still holds a head recorded elsewhere earlier, which a rewrite of the whole chain cannot keep.
 */
export async function verifyCommand(args: string[]): Promise<number> {
  const anchorText = option(args, "anchor");
  const anchor = anchorText === undefined ? undefined : parseAnchor(anchorText);
  return withDatabase(async (db) => {
    const result = await db.driver.read(verifyLedger());
    if (!result.ok) {
      const where =
        result.commitId === null
          ? ""
          : `${result.commitId}${result.seq === null ? "" : ` (seq ${result.seq})`}: `;
      console.log(`FAILED: ${where}${result.problem}`);
      return 1;
    }
    if (anchor) {
      const found = await db.driver.read(hashAt(anchor.seq));
      if (found !== anchor.hash) {
        console.log(
          `FAILED: the anchor seq ${anchor.seq} ${found === undefined ? "is not in the chain" : `has hash ${found}, not ${anchor.hash}`}: the chain was rewritten`,
        );
        return 1;
      }
    }
    console.log(`ok: ${result.commits} commits, head ${result.head}`);
    if (anchor) console.log(`anchor seq ${anchor.seq} matches`);
    if (result.unchainedEvents > 0)
      console.log(`unchained events (from before the ledger): ${result.unchainedEvents}`);
    if (result.erasedVersions + result.erasedEvents > 0) {
      console.log(
        `erased: ${result.erasedVersions} versions, ${result.erasedEvents} event payloads (digests verified)`,
      );
    }
    return 0;
  });
}

function parseAnchor(text: string): { seq: number; hash: string } {
  const match = /^(\d{1,15}):([0-9a-f]{64})$/.exec(text);
  if (!match) throw new UsageError("--anchor must be SEQ:HASH, e.g. 41:9f2c… (64 lowercase hex digits)");
  return { seq: Number(match[1]), hash: match[2] as string };
}

/** `erase --record COLLECTION/ID --version N` or `erase --event ID`. */
export async function eraseCommand(args: string[]): Promise<number> {
  const record = option(args, "record");
  const versionText = option(args, "version");
  const eventId = option(args, "event");
  if ((record === undefined) === (eventId === undefined)) {
    throw new UsageError("usage: outboxd erase --record COLLECTION/ID --version N | --event EVENT_ID");
  }
  return withDatabase(async (db) => {
    let outcome: EraseOutcome;
    if (record !== undefined) {
      const [collection, id, ...rest] = record.split("/");
      const version = Number(versionText);
      if (!collection || !id || rest.length > 0 || !Number.isSafeInteger(version) || version < 1) {
        throw new UsageError("usage: outboxd erase --record COLLECTION/ID --version N");
      }
      outcome = await db.writer.write(eraseVersion(collection, id, version, Date.now()));
    } else {
      outcome = await db.writer.write(eraseEventPayload(eventId as string, Date.now()));
    }
    if (!outcome.erased) {
      console.error(outcome.reason);
      return 1;
    }
    console.log(
      record !== undefined
        ? `erased ${record} version ${versionText}`
        : `erased the payload of event ${eventId}`,
    );
    return 0;
  });
}
