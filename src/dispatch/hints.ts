// What this process knows of claimable work, so that most claims need no scan.
//
// A scanning claim (claim.ts claimDeliveries) walks the ready index and ranks what it finds per
// endpoint: a few hundred microseconds even for a handful of rows, and the dispatcher made one
// for every few deliveries. Yet most new heads are born in this very process: the deliveries its
// commits create, and the next heads its completions promote. Their ids are kept here, per
// endpoint in arrival order, and claimed by primary key (claimDeliveriesById). A hint is only a
// hint: the claim by id checks every condition the scan checks, so a stale one (not the head yet,
// leased by another dispatcher, not due) is simply not taken.
//
// Work no hint names (another process's commits, retries and scheduled deliveries falling due,
// expired leases, a backlog at start-up) is found by the scan, which runs
//   - whenever the dispatcher is woken without hints (the sweep every second, a retry timer,
//     a replay or re-enable, start-up), and while each scan fills some endpoint's room;
//   - otherwise at most every SCAN_PAUSE_MS, so what a hint could not name waits no longer
//     than that even under a steady stream of hinted work.
import type { ClaimRoom } from "./slots.ts";

/** At most this many hints are kept; beyond it the scan finds the rest. */
const MAX_HINTS = 10_000;
/** Between two scans while hints keep the dispatcher busy. */
export const SCAN_PAUSE_MS = 50;

export interface HintedDelivery {
  id: string;
  endpointId: string;
}

export interface TakenHints {
  ids: string[];
  /** The endpoints of those ids. */
  endpointIds: string[];
  /** What is left for a scan after the hints taken, or null when no scan is due now. */
  scan: ClaimRoom | null;
}

export class Hints {
  readonly #byEndpoint = new Map<string, Set<string>>();
  #size = 0;
  /** No scan before this moment, unless woken without hints. */
  #scanAt = 0;

  get size(): number {
    return this.#size;
  }

  /** Deliveries that may be (or soon become) claimable heads. */
  offer(deliveries: Iterable<HintedDelivery>): void {
    for (const { id, endpointId } of deliveries) {
      if (this.#size >= MAX_HINTS) {
        this.scanNow();
        return;
      }
      let ids = this.#byEndpoint.get(endpointId);
      if (!ids) {
        ids = new Set();
        this.#byEndpoint.set(endpointId, ids);
      }
      if (!ids.has(id)) {
        ids.add(id);
        this.#size += 1;
      }
    }
  }

  /** Whether a claim now could take anything: a hint is kept, or a scan is due at `now`. */
  due(now: number): boolean {
    return this.#size > 0 || now >= this.#scanAt;
  }

  /** Work may exist that no hint names: the next claim scans. */
  scanNow(): void {
    this.#scanAt = 0;
  }

  /**
   * The hinted ids that fit `room` (per endpoint, oldest first, up to the claim's limit), removed
   * from here, and the room left for a scan if one is due at `now`.
   */
  take(room: ClaimRoom, now: number): TakenHints {
    const ids: string[] = [];
    const taken = new Map<string, number>();
    for (const [endpointId, hinted] of this.#byEndpoint) {
      const fits = Math.min(room.endpointRoom[endpointId] ?? room.endpointLimit, room.limit - ids.length);
      let n = 0;
      for (const id of hinted) {
        if (n >= fits) break;
        ids.push(id);
        hinted.delete(id);
        n += 1;
      }
      this.#size -= n;
      if (n > 0) taken.set(endpointId, n);
      if (hinted.size === 0) this.#byEndpoint.delete(endpointId);
      if (ids.length >= room.limit) break;
    }
    const endpointIds = [...taken.keys()];
    if (now < this.#scanAt || ids.length >= room.limit) return { ids, endpointIds, scan: null };
    // The scan gets what the hints left of each endpoint's room.
    const endpointRoom: Record<string, number> = { ...room.endpointRoom };
    for (const [endpointId, n] of taken) {
      endpointRoom[endpointId] = Math.max(0, (room.endpointRoom[endpointId] ?? room.endpointLimit) - n);
    }
    return { ids, endpointIds, scan: { ...room, endpointRoom, limit: room.limit - ids.length } };
  }

  /**
   * A scan took `claimed`. If it filled some endpoint's room or its limit, more may be waiting and
   * the next claim scans again; otherwise scans pause until `now + SCAN_PAUSE_MS` (or a wake
   * without hints).
   */
  scanned(scan: ClaimRoom, claimed: readonly { endpointId: string }[], now: number): void {
    const counts = new Map<string, number>();
    for (const { endpointId } of claimed) counts.set(endpointId, (counts.get(endpointId) ?? 0) + 1);
    let full = claimed.length >= scan.limit;
    for (const [endpointId, n] of counts) {
      if (n >= (scan.endpointRoom[endpointId] ?? scan.endpointLimit)) full = true;
    }
    this.#scanAt = full ? 0 : now + SCAN_PAUSE_MS;
  }
}
