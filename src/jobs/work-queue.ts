import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../db/tables.js';
import { inTransaction } from '../db/transaction.js';
import { inBackgroundRun, inSpan, outsideAnyTrace, SpanStatusCode } from '../tracing.js';

/**
 * The columns every queue's table has. The table is its area's (mail's outbox, events' webhook
 * deliveries, imports' runs): the area names it and writes each attempt's result (`settle`);
 * the loop writes only these columns, and `claimed_until`, to claim a row and renew its claim.
 */
export interface QueueRow {
  id: string;
  attempts: number;
  created_at: Date;
  claim_token: string | null;
}

/** What an attempt came to; `columns` are written with the result by the queue's `settle` (a status code, a sent time). */
export type Attempt<Columns = Record<string, never>> = { ok: true; columns?: Columns } | { ok: false; error: string; final?: boolean; columns?: Columns };

/** Where a row stands after an attempt: done, due again after a pause, or failed for good. */
export type Outcome = 'done' | 'retry' | 'failed';

/** An attempt's result, as the queue's `settle` writes it on the row. */
export interface Settlement<Columns> {
  outcome: Outcome;
  /** The attempt's error; null when it succeeded. */
  error: string | null;
  /** With `retry`: the pause before the next attempt. */
  retryDelaySeconds?: number;
  /** What the attempt adds (Attempt's `columns`). */
  columns?: Columns;
}

/**
 * The columns every settle writes, whatever the queue: the claim ends, the error is kept, and a
 * retry is due after its pause. The owning area adds its status and the attempt's columns.
 */
export function settledColumns(settlement: Settlement<unknown>) {
  return {
    claimed_until: null,
    claim_token: null,
    last_error: settlement.error,
    ...(settlement.retryDelaySeconds === undefined ? {} : { next_attempt_at: sql<Date>`now() + make_interval(secs => ${settlement.retryDelaySeconds})` }),
  };
}

export interface QueueDefinition<Row extends QueueRow, Columns = Record<string, never>> {
  /** The job's name (logs, `runNow`). */
  name: string;
  /** The queue's table, named by the area that owns it and adds the queue. */
  table: string;
  /** The statuses a row is due in (default `pending`): an import whose instance died is `running`. */
  dueStatuses?: readonly string[];
  /**
   * For long attempts (an import): the claim is renewed this often while the attempt runs, so the
   * lease can stay short (a dead instance's row is due again soon) however long the attempt takes;
   * a renewal that finds the row taken over aborts the attempt.
   */
  renewLeaseEveryMs?: number;
  /** The longest an attempt may take: its signal aborts then, and its result is a failure. */
  deadlineMs: number;
  /** How long a claim keeps other instances off a row; longer than the deadline and the settle. */
  leaseSeconds: number;
  /** Attempts in flight on this instance. */
  concurrency: number;
  /** At most `limit` attempts in flight per value of `column` (a webhook): a slow peer holds only its own. */
  perDestination?: { column: string; limit: number };
  /** The pause before the next attempt after a failure, or undefined: the row has failed for good. */
  retryDelaySeconds(row: Row): number | undefined;
  /**
   * One attempt at a row. When `signal` aborts (the deadline) the attempt must drop its work at
   * once, within the abort (an SMTP send destroys its connection): the failure is recorded right
   * after, and the row's next attempt may follow.
   */
  attempt(row: Row, signal: AbortSignal): Promise<Attempt<Columns>>;
  /**
   * Writes an attempt's result on its row, only under the claim it was made with (`claim_token`):
   * the owning area's statement, its status for each outcome and the attempt's columns with
   * settledColumns. False when the row was taken over meanwhile (nothing written).
   */
  settle(trx: Transaction<Database>, row: Row, settlement: Settlement<Columns>): Promise<boolean>;
  /** More work in the settle's transaction, once the row is settled (a webhook's failure count). */
  afterSettle?(trx: Transaction<Database>, row: Row, attempt: Attempt<Columns>, outcome: Outcome): Promise<void>;
}

/**
 * The one claim-send-retry loop of the outboxes. Every instance runs it: a pass claims due rows
 * with FOR UPDATE SKIP LOCKED (no two instances take the same row) under a lease (a row whose
 * instance died mid-attempt is due again when the lease ends), starts each attempt on its own
 * and returns; an attempt that ends frees its slot and wakes the loop, so no attempt waits for a
 * batch. Each attempt has a deadline shorter than the lease, and its result is written only
 * under its own claim (`claim_token`), so no row is attempted twice at once because a sender
 * was slow.
 */
export class WorkQueue<Row extends QueueRow, Columns = Record<string, never>> {
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly perDestination = new Map<string, number>();
  private passing: Promise<number> | undefined;
  /** The pass that follows the one in progress, for callers who asked while it ran. */
  private following: Promise<number> | undefined;
  private wakeTimer: NodeJS.Immediate | undefined;
  private stopped = false;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly definition: QueueDefinition<Row, Columns>,
    private readonly log: FastifyBaseLogger,
  ) {
    // An attempt outliving its claim could be claimed and made again by another instance.
    const renewed = definition.renewLeaseEveryMs !== undefined && definition.renewLeaseEveryMs * 3 <= definition.leaseSeconds * 1000;
    if (!renewed && definition.leaseSeconds * 1000 < 2 * definition.deadlineMs) {
      throw new Error(`queue ${definition.name}: the lease must be at least twice the attempt's deadline`);
    }
  }

  get name(): string {
    return this.definition.name;
  }

  /**
   * One pass that begins after this call: claims what the free slots allow and starts it. Returns
   * how many it started. A pass already in progress may have read the table before the caller's
   * change committed (a retry, a ping), so the caller gets the pass after it; callers who ask
   * meanwhile share that one.
   */
  pass(): Promise<number> {
    if (!this.passing) {
      this.passing = this.claimAndStart().finally(() => {
        this.passing = undefined;
      });
      return this.passing;
    }
    this.following ??= this.passing
      // That pass's failure is its own callers' to hear; this one runs all the same.
      .catch(() => 0)
      .then(() => {
        this.following = undefined;
        // A pass begun since (by a caller who asked once the other ended) began after these callers asked: it serves them.
        return this.passing ?? this.pass();
      });
    return this.following;
  }

  /**
   * Waits for the attempts in flight now, and those that the pass in progress and the pass asked
   * for after it start, to settle; not for attempts started later, which a queue that keeps
   * failing would start for as long as it retries.
   */
  async drain(): Promise<void> {
    // A claim that failed started nothing to wait for; its error went to whoever asked for the pass.
    await (this.following ?? this.passing)?.catch(() => undefined);
    await Promise.all(this.inFlight.values());
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.wakeTimer) clearImmediate(this.wakeTimer);
    await this.drain();
  }

  /** A run of the job (tracing on: its span, with the claim, only if the claim took rows). */
  private claimAndStart(): Promise<number> {
    return inBackgroundRun(`job ${this.definition.name}`, async () => {
      const free = this.definition.concurrency - this.inFlight.size;
      if (this.stopped || free <= 0) return 0;
      const rows = await this.claim(free);
      for (const row of rows) this.start(row);
      return rows.length;
    });
  }

  /**
   * Takes up to `limit` due rows for this instance. With `perDestination`, a destination gets no
   * more rows than its limit less what is in flight to it here, counted in the claim itself
   * (the rows of one destination ranked by when they are due).
   */
  private async claim(limit: number): Promise<Row[]> {
    const { table, leaseSeconds, perDestination } = this.definition;
    const token = randomUUID();
    const statuses = this.definition.dueStatuses ?? ['pending'];
    const due = sql`status in (${sql.join(statuses)}) and next_attempt_at <= now() and (claimed_until is null or claimed_until <= now())`;
    let candidates = sql`select id from ${sql.table(table)} where ${due} order by next_attempt_at limit ${limit}`;
    if (perDestination) {
      const inFlight = [...this.perDestination];
      const column = sql.ref(`queued.${perDestination.column}`);
      candidates = sql`
        select id from (
          select queued.id, queued.next_attempt_at, coalesce(busy.used, 0) as used,
                 row_number() over (partition by ${column} order by queued.next_attempt_at, queued.id) as rank
          from ${sql.table(table)} as queued
          left join unnest(${inFlight.map(([destination]) => destination)}::uuid[], ${inFlight.map(([, count]) => count)}::int[]) as busy (destination, used)
            on busy.destination = ${column}
          where ${due}
        ) as ranked
        where rank + used <= ${perDestination.limit}
        order by next_attempt_at
        limit ${limit}`;
    }
    const claimed = await sql<Row>`
      update ${sql.table(table)}
      set claimed_until = now() + make_interval(secs => ${leaseSeconds}), attempts = attempts + 1, claim_token = ${token}
      where id in (
        -- Due is asked again of the locked row: another instance may have claimed it since the candidates were read.
        select id from ${sql.table(table)} where id in (${candidates}) and ${due} for update skip locked
      )
      returning *`.execute(this.db);
    return claimed.rows;
  }

  private destinationOf(row: Row): string | undefined {
    const column = this.definition.perDestination?.column;
    return column ? String((row as unknown as Record<string, unknown>)[column]) : undefined;
  }

  private start(row: Row): void {
    const destination = this.destinationOf(row);
    if (destination) this.perDestination.set(destination, (this.perDestination.get(destination) ?? 0) + 1);
    const running = this.run(row).finally(() => {
      this.inFlight.delete(row.id);
      if (destination) {
        const left = (this.perDestination.get(destination) ?? 1) - 1;
        if (left > 0) this.perDestination.set(destination, left);
        else this.perDestination.delete(destination);
      }
      this.wake();
    });
    this.inFlight.set(row.id, running);
  }

  /** A freed slot may take a row that is due now, without waiting for the next tick. */
  private wake(): void {
    if (this.stopped || this.wakeTimer) return;
    this.wakeTimer = setImmediate(() => {
      this.wakeTimer = undefined;
      outsideAnyTrace(() => this.pass()).catch((error: unknown) => this.log.warn({ err: error, job: this.definition.name }, 'background job failed; it will run again'));
    });
  }

  /**
   * One attempt and its result. Each attempt is a trace of its own (tracing on), whoever woke the
   * queue: its work, its lease renewals and the statements recording its result are its children.
   */
  private run(row: Row): Promise<void> {
    return inSpan(`${this.definition.name} attempt`, { root: true }, async (span) => {
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(new Error(`no result within ${this.definition.deadlineMs / 1000} s`)), this.definition.deadlineMs);
      const renewal = this.renewLease(row, controller);
      let attempt: Attempt<Columns>;
      try {
        attempt = await Promise.race([
          this.definition.attempt(row, controller.signal),
          new Promise<Attempt<Columns>>((resolve) => controller.signal.addEventListener('abort', () => resolve({ ok: false, error: String((controller.signal.reason as Error).message) }))),
        ]);
      } catch (error) {
        attempt = { ok: false, error: String((error as Error).message ?? error).slice(0, 500) };
      } finally {
        clearTimeout(timer);
        if (renewal) clearInterval(renewal);
      }
      if (!attempt.ok) span?.setStatus({ code: SpanStatusCode.ERROR, message: attempt.error });
      try {
        await this.settle(row, attempt);
      } catch (error) {
        // Unsettled, the row is attempted again once its lease ends.
        this.log.warn({ err: error, job: this.definition.name }, 'could not record the result of an attempt');
      }
    });
  }

  /** Renews the claim of a long attempt while it runs; aborts the attempt once the claim is no longer its own. */
  private renewLease(row: Row, controller: AbortController): NodeJS.Timeout | undefined {
    const { renewLeaseEveryMs, table, leaseSeconds } = this.definition;
    if (renewLeaseEveryMs === undefined) return undefined;
    const timer = setInterval(() => {
      sql<{ id: string }>`
        update ${sql.table(table)} set claimed_until = now() + make_interval(secs => ${leaseSeconds})
        where id = ${row.id} and claim_token = ${row.claim_token} returning id`
        .execute(this.db)
        .then((renewed) => {
          if (renewed.rows.length === 0) controller.abort(new Error('the claim was taken over'));
        })
        .catch((error: unknown) => this.log.warn({ err: error, job: this.definition.name }, 'could not renew a claim'));
    }, renewLeaseEveryMs);
    timer.unref();
    return timer;
  }

  /** Writes the result under the claim it was made with (the area's `settle`); a row taken over meanwhile is left alone. */
  private settle(row: Row, attempt: Attempt<Columns>): Promise<void> {
    const delay = attempt.ok || attempt.final ? undefined : this.definition.retryDelaySeconds(row);
    const outcome: Outcome = attempt.ok ? 'done' : delay === undefined ? 'failed' : 'retry';
    const settlement: Settlement<Columns> = {
      outcome,
      error: attempt.ok ? null : attempt.error,
      ...(delay === undefined ? {} : { retryDelaySeconds: delay }),
      ...(attempt.columns === undefined ? {} : { columns: attempt.columns }),
    };
    return inTransaction(this.db, async (trx) => {
      if (await this.definition.settle(trx, row, settlement)) await this.definition.afterSettle?.(trx, row, attempt, outcome);
    });
  }
}

/** For the metrics: rows due now and not yet attempted to the end, and how long the oldest has waited. */
export async function queueStats(db: Kysely<Database>, table: string): Promise<{ count: number; oldestAgeSeconds: number }> {
  const row = await sql<{ due: string; oldest: number | null }>`
    select count(*) as due, extract(epoch from now() - min(next_attempt_at)) as oldest
    from ${sql.table(table)} where status = 'pending' and next_attempt_at <= now()`.execute(db);
  return { count: Number(row.rows[0]?.due ?? 0), oldestAgeSeconds: Math.max(0, Number(row.rows[0]?.oldest ?? 0)) };
}
