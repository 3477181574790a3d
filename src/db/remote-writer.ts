// The remote write path: a group of operations in a few round trips, whatever the group's size.
//
// Over Hrana-over-HTTP (libSQL server, Turso) every statement of an interactive transaction is
// one network round trip, held under the write lock. Here instead the operations of a group
// advance in lockstep, one group at a time: the group's first round of reads is ONE request that
// takes the write lock (BEGIN rides with it), their writes are buffered, and then ONE request
// carries the group's writes with COMMIT. Nothing the locked reads answered can change before
// that COMMIT, so they need no guard. A commit with idempotency key, records and events costs 2
// round trips: its reads (announced up front, op.ts `prefetch`) and its batch. The server's work
// is per statement: one-row INSERTs of the same SQL go as one statement per table (mergeRows).
//
// What an operation run here may do (the Writer sends only operations given as a function,
// which can be made again):
//   - read with SELECT statements (`get`/`all`); a read after the group's first round is
//     answered by another request and guarded in the batch (a guard makes the batch fail, the
//     write_guards CHECK, when what was read changed: an earlier operation of the group wrote it);
//   - write with `run`: the write is buffered and answered with a guess of its row count (the
//     count last seen for that SQL, else 1); unless the count is certain (a plain INSERT … VALUES)
//     or of no interest (`exec`), a guard right after the write checks the guess; a wrong guess
//     of 0 or 1 runs the group again with the other answer at that position, any other sends
//     the operation to the general path below;
//   - end with one write that returns rows (UPDATE … RETURNING, a claim): it runs in the batch
//     and its rows are the operation's last answer; a write whose rows are only a hint
//     (Statement.hint: the heads a completion promoted) may come anywhere and is answered none.
// Two operations of one group that read the same thing (same SQL, same arguments: the record,
// the aggregate's last sequence, the idempotency key) never share a batch: the later one waits
// for the next group, so one never overwrites what the other read. An operation that reads
// again what it already read after writing (its own write would be invisible), or that keeps
// failing its guards, runs alone in an interactive transaction, as every operation did before.
import { memoized } from "../lib/memo.ts";
import { problems } from "../lib/problem.ts";
import type { GroupedOp } from "./driver.ts";
import type { BatchAnswer, BatchStatement } from "./hrana-batch.ts";
import type { ChainStep, Link, Op, Outcome, Row, Statement, Step } from "./op.ts";

/** What the remote path needs from a connection (client-driver.ts). */
export interface GroupConnection {
  /** One request: the statements as one transaction ("write") or one snapshot ("read"). */
  batch(statements: BatchStatement[], mode: "read" | "write"): Promise<BatchAnswer[]>;
  /**
   * A write transaction whose first request runs `reads` (BEGIN rides with it) and holds the
   * write lock until `commit` sends the statements with COMMIT as one more request, or `release`
   * rolls it back. A failure of the reads has no statementIndex; one of `commit` has its index in
   * its statements. Rolled back on any failure.
   */
  lock(reads: BatchStatement[]): Promise<Held>;
  /** Runs one operation alone in an interactive write transaction (the general, slower path). */
  transaction<T>(op: Op<T>): Promise<T>;
  /** Starts over on a fresh connection (after a lost connection or a failed BEGIN). */
  reconnect(): Promise<void>;
}

/** The write lock held by a group (GroupConnection.lock), with the answers of the reads that took it. */
export interface Held {
  answers: BatchAnswer[];
  commit(statements: BatchStatement[]): Promise<BatchAnswer[]>;
  release(): void;
}

/**
 * A group starts once the one before has ENDED, and is gathered first (gatherPlan). Each turn
 * of the write lock costs a round trip whatever the group's size (its reads' answer travels
 * back, its batch travels out), so commits per turn is what throughput follows: one group at a
 * time takes all the clients waiting, if it waits for them. So it
 * starts once the clients the group before answered are back (as many operations as that group
 * had, besides those already waiting when it opened) and a pause is over, or at the latest a
 * round trip (the window's fastest locked reads) after the pause: a group started the moment the
 * one before ended would hold only the few already waiting, and the rest, back a moment later,
 * would pay a turn of their own (about 15 commits per group where gathering takes them all). The pause costs nothing while
 * the other Machine holds the lock: it is GATHER_SHARE of how long the last locked reads waited
 * for it beyond that round trip, so the next reads still reach the server before that turn ends
 * (in a steady alternation it settles at half of what the other's turn lasts beyond a round
 * trip), and it shrinks to nothing once the reads find the lock free.
 */
const GATHER_SHARE = 1;
/** The longest pause (a turn that waited long, behind a migration say, is no steady alternation). */
const MAX_GATHER_MS = 20;
/**
 * A gathered group starts once it holds this many operations, whatever its plan: the Writer's
 * batch (writer.ts maxBatch), which merged hand-overs would otherwise outgrow under a backlog
 * (each group's target counting the one before's size).
 */
const MAX_GATHERED = 256;
/** After this many guard failures in a row, an operation runs alone on the general path. */
const MAX_GROUP_ATTEMPTS = 4;
/** After this many times the ledger's head alone moved under a write batch, the group runs again from its reads. */
const MAX_HEAD_RETRIES = 8;
/** The locked reads whose waits plan the next gathering (gatherMs). */
const LOCK_WAIT_WINDOW = 16;
/** After this many corrected row counts, an operation runs alone on the general path. */
const MAX_CORRECTED_COUNTS = 16;

const GUARD = "INSERT INTO write_guards (held) SELECT 0 WHERE";

interface Read {
  statement: Statement;
  /** A plain copy of what was answered (rows for `all`, one row or undefined for `get`). */
  answer: unknown;
}

interface Write {
  /** The statement, or null for a ledger entry, whose row is built when the batch is (#commit). */
  statement: Statement | null;
  chain: ChainStep | null;
  /** The row count the operation was told, or null when certain (no guard). */
  guess: number | null;
}

interface Task {
  index: number;
  again: () => Op<unknown>;
  op: Op<unknown>;
  attempts: number;
  /**
   * Row counts to answer by write position (the n-th write of the operation), learned from
   * guesses that proved wrong: kept when the operation runs again.
   */
  counts: Map<number, number>;
  /** The step the operation is waiting to have answered. */
  step: IteratorResult<Step, unknown>;
  /** Prefetched answers by statement key, and the keys already handed out. */
  cache: Map<string, unknown>;
  served: Set<string>;
  reads: Read[];
  shared: Set<string>;
  writes: Write[];
  final: Statement | null;
  /** The write position right after an updateOrInsert UPDATE (its INSERT goes there), or -1. */
  insertAfter: number;
  outcome: Outcome | null;
  /** Must run alone on the general path. */
  alone: boolean;
  /** Its last batch failed at a merged statement (mergeRows): the next is sent unmerged. */
  unmerged: boolean;
}

/** What a statement of a write batch is, to tell a failed guard from a failed write. */
interface Role {
  task: Task | null;
  role: "guard" | "count" | "write" | "final" | "merged";
  write?: Write;
  /** The guard of the ledger's head (see #commit). */
  head?: boolean;
}

/** The write lock a group's first reads took, and what they read. */
interface LockedReads {
  /** Until the group's batch commits with it (null after, or when its reads did not take it). */
  held: Held | null;
  /** Keys of the reads made under it: they need no guard in that batch. */
  keys: Set<string>;
  /** When its reads were answered (performance.now()). */
  at: number;
}

const NONE: ReadonlySet<string> = new Set();

type Want = { kind: "read"; statement: Statement } | { kind: "prefetch"; statements: Statement[] };

/** Operations gathered into one group (RemoteWriter.writeGroup). */
interface Gathering {
  ops: GroupedOp[];
  /** The group's outcomes, one per operation gathered, in order. */
  outcomes: Promise<Outcome[]>;
  /** Starts the group if its plan (gatherPlan) says so by now, else when it will. */
  check(): void;
}

/** When a gathered group starts (performance.now() times): see GATHER_SHARE. */
export interface GatherPlan {
  /** Once it holds this many operations and the pause is over (`until`)… */
  target: number;
  until: number;
  /** …or at this time, however many it holds. */
  latest: number;
}

export class RemoteWriter {
  readonly #connection: GroupConnection;
  /** The row count last seen per write SQL: the next guess. */
  readonly #counts = new Map<string, number>();
  /** Settles once the group running has ended: the next may start (nextGroup, #gather). */
  #running: Promise<void> = Promise.resolve();
  /** How long the last LOCK_WAIT_WINDOW groups' reads under the write lock took to be answered (ms), oldest first. */
  readonly #lockWaits: number[] = [];
  /** The group being gathered (writeGroup), if any. */
  #gathering: Gathering | null = null;
  /** The operations of the group that ended last, and when (performance.now()). */
  #lastGroup = { size: 0, endedAt: 0 };
  /** Round trips by purpose, for tests and benchmarks. */
  readonly stats = {
    groups: 0,
    readBatches: 0,
    writeBatches: 0,
    guardFailures: 0,
    alone: 0,
    locked: 0,
    /** Groups that read (commits; not the dispatcher's claims and completions), and their requests. */
    readingGroups: 0,
    readingGroupRequests: 0,
    /**
     * Where the time of the groups whose reads took the write lock went (ms, summed): gathering
     * (from the group before's end), the locked reads (the round trip and the wait for the lock),
     * building the batch once they were answered (the lock held meanwhile), and the batch with
     * COMMIT until its answer (durable).
     */
    gatherMs: 0,
    /** Gathered groups that started with their target reached (the others at the deadline). */
    gatheredFull: 0,
    lockedReadsMs: 0,
    buildMs: 0,
    commitMs: 0,
  };

  constructor(connection: GroupConnection) {
    this.#connection = connection;
  }

  /** Resolves once the group running has ended, or at once while a group is being gathered (writeGroup). */
  nextGroup(): Promise<void> {
    // A group being gathered takes what the Writer has now (writeGroup), up to MAX_GATHERED.
    return this.#gathering && this.#gathering.ops.length < MAX_GATHERED ? Promise.resolve() : this.#running;
  }

  /** Operations join the group being gathered (GATHER_SHARE, gatherPlan). */
  writeGroup(ops: GroupedOp[]): Promise<Outcome[]> {
    this.#gathering ??= this.#gather();
    const gathering = this.#gathering;
    const from = gathering.ops.length;
    gathering.ops.push(...ops);
    gathering.check();
    return gathering.outcomes.then((outcomes) => outcomes.slice(from, from + ops.length));
  }

  /**
   * A group to gather: planned (gatherPlan) once the groups still running have ended, with the
   * operations handed over by then as those already waiting.
   */
  #gather(): Gathering {
    let plan: GatherPlan | null = null;
    let settle!: (outcomes: Promise<Outcome[]>) => void;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const gathering: Gathering = {
      ops: [],
      outcomes: new Promise((resolve) => (settle = resolve)),
      check: () => {
        if (!plan || this.#gathering !== gathering) return;
        clearTimeout(timer);
        const now = performance.now();
        const full = gathering.ops.length >= plan.target;
        if (now >= plan.latest || (full && now >= plan.until) || gathering.ops.length >= MAX_GATHERED) {
          this.#gathering = null;
          this.stats.gatherMs += now - this.#lastGroup.endedAt;
          if (full) this.stats.gatheredFull += 1;
          settle(this.#run(gathering.ops));
        } else timer = setTimeout(gathering.check, (full ? plan.until : plan.latest) - now);
      },
    };
    void this.#running.then(() => {
      plan = gatherPlan(this.#lockWaits, this.#lastGroup, gathering.ops.length);
      gathering.check();
    });
    return gathering;
  }

  async #run(ops: GroupedOp[]): Promise<Outcome[]> {
    let ended!: () => void;
    // One group at a time (the next is gathered meanwhile: writeGroup).
    this.#running = new Promise((resolve) => (ended = resolve));
    const outcomes: Outcome[] = new Array(ops.length);
    try {
      let queue = ops.map((item, index) => newTask(index, item.again, item.op, 0));
      while (queue.length > 0) {
        const next: Task[] = [];
        const alone: Task[] = [];
        await this.#group(queue, next, alone);
        for (const task of alone) {
          this.stats.alone += 1;
          // Whatever the operation answered itself in its buffered run, this run decides.
          task.outcome = await this.#runAlone(task);
        }
        for (const task of queue) if (task.outcome) outcomes[task.index] = task.outcome;
        queue = next;
      }
      return outcomes;
    } finally {
      this.#lastGroup = { size: ops.length, endedAt: performance.now() };
      ended();
    }
  }

  /** One group: read rounds, then one write batch. Leaves tasks to run again in `next`. */
  async #group(tasks: Task[], next: Task[], alone: Task[]): Promise<void> {
    this.stats.groups += 1;
    const requests = { count: 0, read: false };
    const locked: LockedReads = { held: null, keys: new Set(), at: 0 };
    try {
      await this.#groupOf(tasks, next, alone, requests, locked);
    } finally {
      // Not committed (the group wrote nothing, or failed before its batch): roll back.
      locked.held?.release();
      if (requests.read) {
        this.stats.readingGroups += 1;
        this.stats.readingGroupRequests += requests.count;
      }
    }
  }

  async #groupOf(
    tasks: Task[],
    next: Task[],
    alone: Task[],
    requests: { count: number; read: boolean },
    locked: LockedReads,
  ): Promise<void> {
    const owners = new Map<string, Task>();
    const sharedAnswers = new Map<string, unknown>();
    const sharedReads = new Map<string, Statement>();
    let active: Task[] = [];
    for (const task of tasks) {
      if (task.outcome) continue;
      // A task carried over from an earlier group keeps what it read there: it still owns that.
      const keys = [...task.cache.keys(), ...task.reads.map((read) => statementKey(read.statement))];
      if (keys.some((key) => (owners.get(key) ?? task) !== task)) {
        next.push(task);
        continue;
      }
      for (const key of keys) {
        owners.set(key, task);
      }
      active.push(task);
    }
    for (;;) {
      const wanting: { task: Task; want: Want }[] = [];
      for (const task of active) {
        const want = this.#advance(task, sharedAnswers);
        if (want) wanting.push({ task, want });
      }
      const moved = new Set<Task>();
      for (const task of active) {
        if (task.alone && !task.outcome) {
          alone.push(task);
          moved.add(task);
        }
      }
      if (wanting.length === 0) {
        active = active.filter((task) => !moved.has(task));
        break;
      }
      // One read request for every task that wants to read, except those whose reads overlap
      // another task's in this group: they wait for the next group.
      const statements: BatchStatement[] = [];
      const answerAt: { task: Task; want: Want; at: number[] }[] = [];
      const sharedAt = new Map<string, number>();
      for (const { task, want } of wanting) {
        const asked = want.kind === "read" ? [want.statement] : want.statements;
        const keys = asked.filter((s) => !s.batchShared).map(statementKey);
        if (keys.some((key) => (owners.get(key) ?? task) !== task)) {
          next.push(task);
          moved.add(task);
          continue;
        }
        for (const key of keys) {
          owners.set(key, task);
        }
        const at = asked.map((statement) => {
          const key = statementKey(statement);
          if (statement.batchShared) {
            const known = sharedAt.get(key);
            if (known !== undefined) return known;
            sharedAt.set(key, statements.length);
            sharedReads.set(key, statement);
          }
          statements.push({ sql: statement.sql, args: statement.args });
          return statements.length - 1;
        });
        answerAt.push({ task, want, at });
      }
      active = active.filter((task) => !moved.has(task));
      if (statements.length === 0) continue;
      let results: BatchAnswer[];
      // The group's first reads take the write lock, so nothing they answer can change before
      // the group's batch commits.
      const underLock = requests.count === 0;
      try {
        this.stats.readBatches += 1;
        requests.count += 1;
        requests.read = true;
        if (underLock) {
          this.stats.locked += 1;
          const asked = performance.now();
          locked.held = await this.#connection.lock(statements);
          locked.at = performance.now();
          this.stats.lockedReadsMs += locked.at - asked;
          this.#lockWaits.push(locked.at - asked);
          if (this.#lockWaits.length > LOCK_WAIT_WINDOW) this.#lockWaits.shift();
          results = locked.held.answers;
        } else results = await this.#connection.batch(statements, "read");
      } catch {
        // Only reads were sent: nothing of this group was written.
        await this.#connection.reconnect().catch(() => undefined);
        const failure = problems.unavailable("the database could not be reached; nothing was written, retry");
        for (const task of tasks) if (!alone.includes(task)) task.outcome ??= { ok: false, error: failure };
        next.length = 0;
        return;
      }
      for (const { task, want, at } of answerAt) {
        if (underLock) {
          const asked = want.kind === "read" ? [want.statement] : want.statements;
          for (const statement of asked) locked.keys.add(statementKey(statement));
        }
        if (want.kind === "prefetch") {
          want.statements.forEach((statement, i) => {
            const answer = answerOf(statement, results[at[i] as number] as BatchAnswer);
            const key = statementKey(statement);
            if (statement.batchShared) sharedAnswers.set(key, answer);
            else task.cache.set(key, answer);
          });
          resume(task, undefined);
        } else {
          const { statement } = want;
          const answer = answerOf(statement, results[at[0] as number] as BatchAnswer);
          const key = statementKey(statement);
          if (statement.batchShared) {
            sharedAnswers.set(key, answer);
            task.shared.add(key);
          } else {
            task.reads.push({ statement, answer: copy(answer) });
            task.served.add(key);
          }
          resume(task, answer);
        }
      }
    }
    await this.#commit(active, next, alone, { reads: sharedReads, answers: sharedAnswers }, requests, locked);
  }

  /**
   * Runs a task until it needs a read round (returned), is ready for the write batch, or is
   * done. Answers reads it prefetched and buffers its writes on the way.
   */
  #advance(task: Task, sharedAnswers: Map<string, unknown>): Want | null {
    while (!task.outcome && !task.final && !task.alone) {
      const { step } = task;
      if (step.done) {
        task.outcome = { ok: true, value: step.value };
        return null;
      }
      const statement = step.value;
      if (statement.kind === "prefetch") return { kind: "prefetch", statements: statement.statements };
      const insertAfter = task.insertAfter;
      task.insertAfter = -1;
      if (statement.kind === "chain") {
        // A ledger entry: its place in the chain is decided when the write batch is built, on the
        // head the group read with its other reads (announced by the operation), guarded there.
        const key = statementKey(statement.head);
        if (!statement.head.batchShared || !sharedAnswers.has(key)) {
          // Not announced: the general path reads the head itself.
          task.alone = true;
          return null;
        }
        task.shared.add(key);
        task.writes.push({ statement: null, chain: statement, guess: null });
        resume(task, undefined);
        continue;
      }
      if (isRead(statement)) {
        const key = statementKey(statement);
        if (statement.batchShared) {
          if (!sharedAnswers.has(key)) return { kind: "read", statement };
          task.shared.add(key);
          resume(task, sharedAnswers.get(key));
          continue;
        }
        if (task.served.has(key) && task.writes.length > 0) {
          // A read again after writing: the buffered write would be invisible to it.
          task.alone = true;
          return null;
        }
        if (!task.cache.has(key)) return { kind: "read", statement };
        const answer = task.cache.get(key);
        if (!task.served.has(key)) task.reads.push({ statement, answer: copy(answer) });
        task.served.add(key);
        resume(task, answer);
        continue;
      }
      if (statement.hint) {
        // Rows the operation can do without (op.ts Statement.hint): run blind, answered none.
        task.writes.push({ statement: { ...statement, kind: "run" }, chain: null, guess: null });
        resume(task, []);
        continue;
      }
      if (statement.kind === "run" && statement.orInsert) {
        // updateOrInsert: told "no row", the operation asks for its INSERT, which the batch
        // then runs only if the UPDATE really changed nothing.
        task.writes.push({ statement, chain: null, guess: null });
        task.insertAfter = task.writes.length;
        resume(task, 0);
        continue;
      }
      if (statement.kind === "run") {
        if (insertAfter === task.writes.length) {
          task.writes.push({ statement: onlyIfNothingChanged(statement), chain: null, guess: null });
          resume(task, 1);
          continue;
        }
        const guess =
          statement.blind || certainlyOneRow(statement.sql)
            ? null
            : (task.counts.get(task.writes.length) ?? this.#counts.get(statement.sql) ?? 1);
        task.writes.push({ statement, chain: null, guess });
        resume(task, guess ?? 1);
        continue;
      }
      // A write that returns rows: the operation's last step, answered after the batch.
      task.final = statement;
      return null;
    }
    return null;
  }

  async #commit(
    tasks: Task[],
    next: Task[],
    alone: Task[],
    shared: { reads: Map<string, Statement>; answers: Map<string, unknown> },
    requests: { count: number },
    lockedReads: LockedReads,
  ): Promise<void> {
    const { reads: sharedReads, answers: sharedAnswers } = shared;
    // An operation that threw (a version conflict, decided from its reads) writes nothing.
    let batchTasks = tasks.filter(
      (task) => !(task.outcome && !task.outcome.ok) && (task.writes.length > 0 || task.final !== null),
    );
    // The ledger's head, when the group chains: the one read another Machine's commits always
    // change, whatever they wrote.
    const headKey = batchTasks
      .flatMap((task) => task.writes)
      .map((write) => (write.chain ? statementKey(write.chain.head) : null))
      .find((key) => key !== null);
    let entries = placeChainEntries(batchTasks, sharedAnswers);
    batchTasks = batchTasks.filter((task) => !(task.outcome && !task.outcome.ok));
    if (batchTasks.length === 0) return;
    // What each statement of the batch is, to tell a failed guard from a failed write.
    let roles: Role[] = [];
    let statements: BatchStatement[] = [];
    let results: BatchAnswer[] | null = null;
    // The group's chain goes under the write lock (its reads took it already, else #locked).
    let locked = headKey !== undefined;
    /** The group's batch as it stands now, unguarded for what `unguarded` names (read under the lock). */
    const batchOf = (unguarded: ReadonlySet<string>) =>
      this.#batch(batchTasks, entries, sharedReads, sharedAnswers, headKey, unguarded);
    for (let headRetries = 0; results === null; headRetries++) {
      try {
        const held = lockedReads.held;
        if (held) {
          // The group's reads hold the write lock: its batch with COMMIT, unguarded for them.
          lockedReads.held = null;
          ({ statements, roles } = batchOf(lockedReads.keys));
          requests.count += 1;
          const request = held.commit(statements);
          const committing = performance.now();
          this.stats.buildMs += committing - lockedReads.at;
          results = await request;
          this.stats.commitMs += performance.now() - committing;
        } else if (locked && headKey !== undefined) {
          // BEGIN with the head's read, then the batch with COMMIT.
          requests.count += 2;
          const request = this.#locked(headKey, sharedReads, (headAnswer) => {
            sharedAnswers.set(headKey, headAnswer);
            entries = placeChainEntries(batchTasks, sharedAnswers);
            batchTasks = batchTasks.filter((task) => !(task.outcome && !task.outcome.ok));
            ({ statements, roles } = batchOf(new Set([headKey])));
            return statements;
          });
          results = await request;
        } else {
          ({ statements, roles } = batchOf(NONE));
          this.stats.writeBatches += 1;
          requests.count += 1;
          const request = this.#connection.batch(statements, "write");
          results = await request;
        }
      } catch (error) {
        const index = batchStatementIndex(error);
        const failed = index === null ? undefined : roles[index];
        if (!failed?.head || headRetries >= MAX_HEAD_RETRIES || headKey === undefined) {
          await this.#failed(error, index, roles, batchTasks, next, alone);
          return;
        }
        // Only the chain's head moved (another Machine chained first; the guards after it were
        // not reached): read the head again and build the entries on it, without running the
        // operations again. Any other guard that now fails sends the group round again. From
        // the second time on, and for the groups of the next moments, under the write lock.
        this.stats.guardFailures += 1;
        if (headRetries >= 1) {
          locked = true;
          continue;
        }
        const headRead = sharedReads.get(headKey) as Statement;
        try {
          this.stats.readBatches += 1;
          requests.count += 1;
          const [fresh] = await this.#connection.batch([{ sql: headRead.sql, args: headRead.args }], "read");
          sharedAnswers.set(headKey, answerOf(headRead, fresh as BatchAnswer));
        } catch {
          await this.#connection.reconnect().catch(() => undefined);
          const failure = problems.unavailable(
            "the database could not be reached; nothing was written, retry",
          );
          for (const task of batchTasks) task.outcome = { ok: false, error: failure };
          return;
        }
        entries = placeChainEntries(batchTasks, sharedAnswers);
        batchTasks = batchTasks.filter((task) => !(task.outcome && !task.outcome.ok));
        if (batchTasks.length === 0) return;
      }
    }
    roles.forEach((role, i) => {
      if (role.role === "write" && role.write?.guess !== null && role.write?.statement) {
        this.#counts.set(role.write.statement.sql, (results[i] as BatchAnswer).rowsAffected);
      }
    });
    for (const task of batchTasks) {
      if (!task.final) continue;
      const at = roles.findIndex((role) => role.task === task && role.role === "final");
      resume(task, answerOf(task.final, results[at] as BatchAnswer));
      if (!task.step.done && !task.outcome) {
        task.outcome = {
          ok: false,
          error: new Error("an operation on the remote write path went on after its returning write"),
        };
      } else if (task.step.done) task.outcome ??= { ok: true, value: task.step.value };
    }
  }

  /**
   * The write batch with the ledger's head read under the write lock: one write transaction whose
   * first request reads the head (BEGIN rides with it) and whose second carries the batch built
   * on it, with COMMIT. Another machine cannot chain in between, so the head needs no guard; the
   * price is the lock held across a round trip. Used for a group that chains and whose reads did
   * not take the lock (its chain step came after them).
   */
  async #locked(
    headKey: string,
    sharedReads: Map<string, Statement>,
    build: (head: unknown) => BatchStatement[],
  ): Promise<BatchAnswer[]> {
    this.stats.locked += 1;
    const headRead = sharedReads.get(headKey) as Statement;
    const held = await this.#connection.lock([{ sql: headRead.sql, args: headRead.args }]);
    let statements: BatchStatement[];
    try {
      statements = build(answerOf(headRead, held.answers[0] as BatchAnswer));
    } catch (error) {
      held.release();
      throw error;
    }
    return held.commit(statements);
  }

  /**
   * The group's write batch: guards, then each task's writes (the ledger's entries built), in
   * order. Reads made under the write lock this batch commits in (`unguarded`) need no guard.
   */
  #batch(
    batchTasks: Task[],
    entries: Map<Write, Statement>,
    sharedReads: Map<string, Statement>,
    sharedAnswers: Map<string, unknown>,
    headKey: string | undefined,
    unguarded: ReadonlySet<string>,
  ): { statements: BatchStatement[]; roles: Role[] } {
    const roles: Role[] = [];
    const statements: BatchStatement[] = [];
    const push = (statement: BatchStatement, role: Role) => {
      statements.push(statement);
      roles.push(role);
    };
    const usedShared = new Set(batchTasks.flatMap((task) => [...task.shared]));
    for (const key of usedShared) {
      const statement = sharedReads.get(key);
      if (!statement || unguarded.has(key)) continue;
      for (const guard of readGuards(statement, sharedAnswers.get(key)))
        push(guard, { task: null, role: "guard", head: key === headKey });
    }
    for (const task of batchTasks) {
      for (const read of task.reads) {
        if (unguarded.has(statementKey(read.statement))) continue;
        for (const guard of readGuards(read.statement, read.answer)) push(guard, { task, role: "guard" });
      }
      for (const write of task.writes) {
        const statement = write.statement ?? (entries.get(write) as Statement);
        push({ sql: statement.sql, args: statement.args }, { task, role: "write", write });
        if (write.guess !== null) {
          push(
            { sql: `${GUARD} changes() IS NOT :__count`, args: { __count: write.guess } },
            { task, role: "count", write },
          );
        }
      }
      if (task.final) push({ sql: task.final.sql, args: task.final.args }, { task, role: "final" });
    }
    // A batch whose merged statement failed runs again unmerged, so that the failure has an owner.
    return batchTasks.some((task) => task.unmerged) ? { statements, roles } : mergeRows(statements, roles);
  }

  /** After a failed write batch: what each of its tasks does next (see the comments inside). */
  async #failed(
    error: unknown,
    index: number | null,
    roles: Role[],
    batchTasks: Task[],
    next: Task[],
    alone: Task[],
  ): Promise<void> {
    if (index === null) {
      // The request failed on the way or its answer was lost: it may have committed or not.
      await this.#connection.reconnect().catch(() => undefined);
      const outcome: Outcome = isBusy(error)
        ? { ok: false, error }
        : {
            ok: false,
            error: problems.outcomeUnknown(
              "the connection to the database was lost while committing; the outcome is unknown: " +
                "retry with the same Idempotency-Key or the same event ids, which is safe",
            ),
          };
      for (const task of batchTasks) task.outcome = outcome;
      return;
    }
    // One statement failed and the batch rolled back: nothing of it was written.
    const failed = roles[index];
    if (failed?.role === "merged") {
      // Rows of several operations: which one failed is told by the same batch unmerged.
      for (const task of batchTasks) {
        Object.assign(task, newTask(task.index, task.again, task.again(), task.attempts, task.counts));
        task.unmerged = true;
        next.push(task);
      }
      return;
    }
    if (failed?.role === "guard") this.stats.guardFailures += 1;
    for (const task of batchTasks) {
      let counts = task.counts;
      let attempts = task.attempts + 1;
      if (failed?.task === task && failed.role !== "guard") {
        const corrected = failed.role === "count" ? correctedCount(task, failed.write) : null;
        if (corrected === null) {
          // A write the reads did not foresee, or a count that is neither 0 nor 1: the
          // general path decides.
          task.alone = true;
          alone.push(task);
          continue;
        }
        // A wrong guess of 0 or 1 (a new minute bucket, a refused fence): run again with the
        // other answer at that position.
        counts = new Map(counts).set(corrected.position, corrected.count);
        attempts = task.attempts;
      }
      Object.assign(task, newTask(task.index, task.again, task.again(), attempts, counts));
      if (task.attempts >= MAX_GROUP_ATTEMPTS || task.counts.size > MAX_CORRECTED_COUNTS) {
        task.alone = true;
        alone.push(task);
      } else next.push(task);
    }
    return;
  }

  async #runAlone(task: Task): Promise<Outcome> {
    try {
      return { ok: true, value: await this.#connection.transaction(task.again()) };
    } catch (error) {
      return { ok: false, error };
    }
  }
}

/**
 * The rows of the group's ledger entries, in batch order, each built on the one before it from
 * the head the group read (DESIGN §13: the chain follows the order commits are written). A task
 * whose entry cannot be built fails alone (its outcome is set); the others are placed without it.
 */
function placeChainEntries(tasks: Task[], sharedAnswers: Map<string, unknown>): Map<Write, Statement> {
  for (;;) {
    const entries = new Map<Write, Statement>();
    let head: Link | undefined;
    let known = false;
    let failed = false;
    for (const task of tasks) {
      if (task.outcome && !task.outcome.ok) continue;
      try {
        let at = head;
        const rows = new Map<Write, Statement>();
        for (const write of task.writes) {
          if (!write.chain) continue;
          if (!known) {
            at = head = sharedAnswers.get(statementKey(write.chain.head)) as Link | undefined;
            known = true;
          }
          const { link, statement } = write.chain.append(at);
          rows.set(write, statement);
          at = link;
        }
        for (const [write, statement] of rows) entries.set(write, statement);
        head = at;
      } catch (error) {
        task.outcome = { ok: false, error };
        failed = true;
        break;
      }
    }
    // Entries built on a failed task's would leave a gap: build them again without it.
    if (!failed) return entries;
  }
}

/** The position and other answer of a wrongly guessed 0 or 1, unless already corrected once. */
function correctedCount(task: Task, write: Write | undefined): { position: number; count: number } | null {
  if (!write || (write.guess !== 0 && write.guess !== 1)) return null;
  const position = task.writes.indexOf(write);
  if (position < 0 || task.counts.has(position)) return null;
  return { position, count: 1 - write.guess };
}

function newTask(
  index: number,
  again: () => Op<unknown>,
  op: Op<unknown>,
  attempts: number,
  counts: Map<number, number> = new Map(),
): Task {
  const task: Task = {
    index,
    again,
    op,
    attempts,
    counts,
    step: { done: false, value: { kind: "prefetch", statements: [] } },
    cache: new Map(),
    served: new Set(),
    reads: [],
    shared: new Set(),
    writes: [],
    final: null,
    insertAfter: -1,
    outcome: null,
    alone: false,
    unmerged: false,
  };
  try {
    task.step = op.next();
  } catch (error) {
    task.outcome = { ok: false, error };
  }
  return task;
}

/** Hands the task its answer and moves it to its next step (or its end). */
function resume(task: Task, answer: unknown): void {
  try {
    task.step = task.op.next(answer);
  } catch (error) {
    task.outcome = { ok: false, error };
  }
}

function statementKey(statement: Statement): string {
  const args = Object.keys(statement.args)
    .sort()
    .map((name) => [name, statement.args[name]]);
  return `${statement.kind}\u0000${statement.sql}\u0000${JSON.stringify(args)}`;
}

function isRead(statement: Statement): boolean {
  return statement.kind !== "run" && /^\s*SELECT\b/i.test(statement.sql);
}

/** A plain INSERT … VALUES of one row changes exactly one row or fails. */
function certainlyOneRow(sql: string): boolean {
  return (
    /^\s*INSERT\s+INTO\b/i.test(sql) &&
    /\bVALUES\b/i.test(sql) &&
    !/\bON\s+CONFLICT\b|\bOR\s+(IGNORE|REPLACE)\b/i.test(sql)
  );
}

/** `INSERT … VALUES (…)` as `INSERT … SELECT … WHERE changes() = 0`: only if the UPDATE before it changed nothing. */
function onlyIfNothingChanged(insert: Statement): Statement {
  const sql = insert.sql.replace(/\bVALUES\s*\(([\s\S]*)\)\s*$/i, "SELECT $1 WHERE changes() = 0");
  if (sql === insert.sql) throw new Error(`not a single-row INSERT … VALUES: ${insert.sql}`);
  return { ...insert, sql };
}

/** What an operation receives for one statement's result set (see Statement.kind). */
export function answerOf(statement: Statement, result: BatchAnswer): unknown {
  switch (statement.kind) {
    case "all":
      return result.rows;
    case "get":
      return result.rows[0];
    case "run":
      return result.rowsAffected;
  }
}

function copy(answer: unknown): unknown {
  if (Array.isArray(answer)) return answer.map((row) => ({ ...(row as Row) }));
  return answer === undefined ? undefined : { ...(answer as Row) };
}

/**
 * Rows per guard statement of an `all` read: each row binds one argument per column, and SQLite
 * caps a statement's arguments (32,766 since 3.32).
 */
const ROWS_PER_GUARD = 256;

/**
 * Statements that fail (write_guards' CHECK) unless `statement` still answers `answer`: the
 * same row for `get` (or still none), the same number of rows and each of them for `all`.
 * An `all` read's rows are checked as a set: the rows read, as VALUES, EXCEPT what the read
 * answers now (compared by value, NULLs alike). So the read runs once per guard statement: it
 * ran once per row before (an EXISTS per row; a completion's guard of 64 deliveries re-read
 * them all 64 times, ~24 ms per guard under the server's write lock, ~80% of a remote drain's
 * database time).
 */
export function readGuards(statement: Statement, answer: unknown): BatchStatement[] {
  const column = (name: string) => `g."${name.replaceAll('"', '""')}"`;
  let bound = 0;
  const bind = (args: Record<string, string | number | null>, value: unknown) => {
    const name = `__g${bound++}`;
    args[name] = value as string | number | null;
    return `:${name}`;
  };
  const matches = (row: Row, args: Record<string, string | number | null>) => {
    const terms = Object.entries(row).map(([name, value]) => `${column(name)} IS ${bind(args, value)}`);
    return `EXISTS (SELECT 1 FROM (${statement.sql}) AS g WHERE ${terms.join(" AND ") || "1"})`;
  };
  if (statement.kind === "get") {
    const args = { ...statement.args };
    const sql =
      answer === undefined
        ? `${GUARD} EXISTS (${statement.sql})`
        : `${GUARD} NOT ${matches(answer as Row, args)}`;
    return [{ sql, args }];
  }
  const rows = answer as Row[];
  const guards: BatchStatement[] = [
    {
      sql: `${GUARD} (SELECT count(*) FROM (${statement.sql})) IS NOT :__rows`,
      args: { ...statement.args, __rows: rows.length },
    },
  ];
  const names = Object.keys(rows[0] ?? {});
  for (let i = 0; i < rows.length; i += ROWS_PER_GUARD) {
    const args = { ...statement.args };
    const values = rows
      .slice(i, i + ROWS_PER_GUARD)
      .map((row) => `(${names.map((name) => bind(args, row[name])).join(", ")})`);
    const now = `SELECT ${names.map(column).join(", ")} FROM (${statement.sql}) AS g`;
    guards.push({ sql: `${GUARD} EXISTS (VALUES ${values.join(", ")} EXCEPT ${now})`, args });
  }
  return guards;
}

/** The index of the statement that failed in a batch, or null when the request itself failed. */
function batchStatementIndex(error: unknown): number | null {
  if (typeof error !== "object" || error === null) return null;
  const { statementIndex, code } = error as { statementIndex?: unknown; code?: unknown };
  if (typeof statementIndex !== "number") return null;
  // SQLite's own refusals (a guard's CHECK, a constraint): the batch rolled back, nothing written.
  if (typeof code === "string" && code.startsWith("SQLITE_") && !code.startsWith("SQLITE_BUSY")) {
    return statementIndex;
  }
  return null;
}

function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("SQLITE_BUSY");
}

/**
 * The pause before the next group (GATHER_SHARE), from how long
 * the window's locked reads took to be answered (ms, oldest first): the share of the last one's
 * wait beyond the fastest one's, at most MAX_GATHER_MS.
 */
export function gatherMs(lockWaits: readonly number[]): number {
  const last = lockWaits.at(-1);
  if (last === undefined) return 0;
  return Math.min(MAX_GATHER_MS, (last - Math.min(...lockWaits)) * GATHER_SHARE);
}

/**
 * When the group gathered after `last` starts (GATHER_SHARE): once the operations that were
 * waiting when it opened (`waiting`) and as many as `last` answered (their clients, back with
 * their next commits) are in and the pause (gatherMs) is over, or at the latest a round trip
 * (the window's fastest locked read) after the pause.
 */
export function gatherPlan(
  lockWaits: readonly number[],
  last: { size: number; endedAt: number },
  waiting: number,
): GatherPlan {
  const until = last.endedAt + gatherMs(lockWaits);
  const roundTrip = lockWaits.length > 0 ? Math.min(...lockWaits) : 0;
  return { target: Math.min(MAX_GATHERED, waiting + last.size), until, latest: until + roundTrip };
}

/**
 * A plain one-row INSERT (`INSERT INTO t (cols) VALUES (…)` of parameters and constants, no
 * ON CONFLICT, RETURNING or subquery), and the ledger's entry, whose `event_pos` is the largest
 * `pos` of events when it is inserted (EVENT_POS).
 */
const PLAIN_INSERT = /^\s*INSERT\s+INTO\s+([A-Za-z_]\w*)\s*\(([^()]*)\)\s*VALUES\s*\(([\s\S]*)\)\s*$/i;
const EVENT_POS = "(SELECT max(pos) FROM events)";

interface PlainInsert {
  table: string;
  columns: string;
  /** The VALUES list, EVENT_POS in it as `:__eventPos`. */
  values: string;
  eventPos: boolean;
}

const plainInsert = memoized((sql: string): PlainInsert | null => {
  const text = sql.replace(EVENT_POS, ":__eventPos");
  if (/\bON\s+CONFLICT\b|\bRETURNING\b|\bSELECT\b|\bOR\s+(IGNORE|REPLACE)\b/i.test(text)) return null;
  const match = PLAIN_INSERT.exec(text);
  if (!match) return null;
  return {
    table: match[1] as string,
    columns: match[2] as string,
    values: match[3] as string,
    eventPos: text !== sql,
  };
}, 1024);

/**
 * The batch with each table's one-row INSERTs of the same SQL as ONE statement,
 * `INSERT INTO t (cols) SELECT … FROM json_each(:__rows)`, their rows in batch order, in the place
 * of the last of them: the server runs a statement per table instead of one per row. Only where
 * no other statement of the batch names the table (a guard, an UPDATE, an INSERT of another form):
 * nothing else then reads or writes it, so moving its rows there changes no answer (the schema has
 * no triggers or foreign keys), and each row still succeeds or fails as it would have. The ledger's
 * entries (EVENT_POS) merge after the events they count: each entry's `event_pos` is the largest
 * `pos` after all the batch's events less the events the batch inserted after it.
 */
function mergeRows(
  statements: BatchStatement[],
  roles: Role[],
): { statements: BatchStatement[]; roles: Role[] } {
  const bySql = new Map<string, number[]>();
  statements.forEach((statement, i) => {
    const role = roles[i];
    if (role?.role !== "write" || role.write?.guess !== null) return;
    const at = bySql.get(statement.sql);
    if (at) at.push(i);
    else bySql.set(statement.sql, [i]);
  });
  const plain = new Map<string, { at: number[]; insert: PlainInsert }>();
  for (const [sql, at] of bySql) {
    const insert = at.length > 1 ? plainInsert(sql) : null;
    if (insert) plain.set(sql, { at, insert });
  }
  const positional = [...plain].filter(([, { insert }]) => insert.eventPos).map(([sql]) => sql);
  const namedElsewhere = (table: string, sql: string, besides: string[]) => {
    const name = new RegExp(`\\b${table}\\b`, "i");
    return statements.some(
      (other) => other.sql !== sql && !besides.includes(other.sql) && name.test(other.sql),
    );
  };
  const merged = new Map<number, BatchStatement>();
  const dropped = new Set<number>();
  const merge = (at: number[], statement: BatchStatement) => {
    merged.set(at.at(-1) as number, statement);
    for (const i of at.slice(0, -1)) dropped.add(i);
  };
  let events: number[] | null = null;
  for (const [sql, { at, insert }] of plain) {
    if (insert.eventPos) continue;
    if (namedElsewhere(insert.table, sql, insert.table === "events" ? positional : [])) continue;
    if (insert.table === "events") events = at;
    merge(
      at,
      rowsStatement(
        insert,
        at.map((i) => statements[i] as BatchStatement),
        null,
      ),
    );
  }
  for (const sql of positional) {
    const { at, insert } = plain.get(sql) as { at: number[]; insert: PlainInsert };
    // Its events merged, and all of them before the statement's place.
    if (!events || (events.at(-1) as number) > (at.at(-1) as number)) continue;
    if (namedElsewhere(insert.table, sql, [])) continue;
    const eventRows = events;
    const later = at.map((i) => eventRows.filter((e) => e > i).length);
    merge(
      at,
      rowsStatement(
        insert,
        at.map((i) => statements[i] as BatchStatement),
        later,
      ),
    );
  }
  if (merged.size === 0) return { statements, roles };
  const out: BatchStatement[] = [];
  const outRoles: Role[] = [];
  statements.forEach((statement, i) => {
    if (dropped.has(i)) return;
    const rows = merged.get(i);
    out.push(rows ?? statement);
    outRoles.push(rows ? { task: null, role: "merged" } : (roles[i] as Role));
  });
  return { statements: out, roles: outRoles };
}

/**
 * One INSERT of many rows: each row a JSON array of the parameters' values in order of first
 * appearance (`value ->> k` gives back SQLite's integer, real, text or NULL), and, for the
 * ledger's entries, the events inserted after it (`later`).
 */
function rowsStatement(insert: PlainInsert, rows: BatchStatement[], later: number[] | null): BatchStatement {
  const names: string[] = [];
  const values = insert.values.replace(/:([A-Za-z_]\w*)/g, (_, name: string) => {
    if (name === "__eventPos") return `(${EVENT_POS} - (value ->> :__later))`;
    if (!names.includes(name)) names.push(name);
    return `(value ->> ${names.indexOf(name)})`;
  });
  const data = rows.map((row, k) => {
    const list: (string | number | null)[] = names.map((name) => row.args[name] ?? null);
    if (later) list.push(later[k] as number);
    return list;
  });
  return {
    sql: `INSERT INTO ${insert.table} (${insert.columns}) SELECT ${values.replaceAll(":__later", String(names.length))} FROM json_each(:__rows)`,
    args: { __rows: JSON.stringify(data) },
  };
}
