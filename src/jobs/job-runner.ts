import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import type { Kysely } from 'kysely';
import type { Database } from '../db/tables.js';
import { inBackgroundRun } from '../tracing.js';
import { WorkQueue, type QueueDefinition, type QueueRow } from './work-queue.js';

export interface Job {
  /** Names the job in logs and in `runNow`. */
  name: string;
  /** Pause between the end of one run and the start of the next. */
  everyMs: number;
  /**
   * One pass of the job. Every instance runs every job, so a pass must be safe to run on
   * several instances at once: claim rows with FOR UPDATE SKIP LOCKED, or be idempotent.
   */
  run: () => Promise<unknown>;
}

/**
 * The one runner for background loops: started when the app is ready, stopped (waiting for a
 * pass in progress) when it closes. A pass that fails is logged and tried again next time.
 */
export class JobRunner {
  private readonly jobs = new Map<string, Job>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly running = new Map<string, Promise<void>>();
  private readonly queues: WorkQueue<any, any>[] = [];
  private readonly passesEnded = new Map<string, number>();
  private started = false;

  constructor(private readonly log: FastifyBaseLogger) {}

  add(job: Job): void {
    if (this.jobs.has(job.name)) throw new Error(`job ${job.name} is registered twice`);
    this.jobs.set(job.name, job);
    if (this.started) this.schedule(job);
  }

  /** An outbox on the one claim-send-retry loop (work-queue.ts), polled every `everyMs`. */
  addQueue<Row extends QueueRow, Columns>(db: Kysely<Database>, definition: QueueDefinition<Row, Columns>, everyMs = 1000): WorkQueue<Row, Columns> {
    const queue = new WorkQueue(db, definition, this.log);
    this.add({ name: definition.name, everyMs, run: () => queue.pass() });
    this.queues.push(queue);
    return queue;
  }

  /** The names of the jobs registered. */
  get names(): string[] {
    return [...this.jobs.keys()];
  }

  /** How many passes of the job `name` have ended (for operators, and tests that wait for one). */
  passes(name: string): number {
    return this.passesEnded.get(name) ?? 0;
  }

  start(): void {
    this.started = true;
    for (const job of this.jobs.values()) this.schedule(job);
  }

  /** Runs one pass now (after the pass in progress, if any); for tests and for operators. */
  async runNow(name: string): Promise<void> {
    const job = this.jobs.get(name);
    if (!job) throw new Error(`no job named ${name}`);
    await this.running.get(name);
    await this.pass(job);
    await this.queues.find((queue) => queue.name === name)?.drain();
  }

  async stop(): Promise<void> {
    this.started = false;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    // The queues stop first, so a pass asked for by a job still running claims nothing more.
    const queuesStopped = Promise.all(this.queues.map((queue) => queue.stop()));
    await Promise.all(this.running.values());
    await queuesStopped;
  }

  private schedule(job: Job): void {
    const timer = setTimeout(async () => {
      await this.pass(job);
      if (this.started) this.schedule(job);
    }, job.everyMs);
    timer.unref();
    this.timers.set(job.name, timer);
  }

  private async pass(job: Job): Promise<void> {
    // Each pass a run of its own, outside any trace: a span (tracing on) only if it finds work.
    const run = inBackgroundRun(`job ${job.name}`, () => job.run())
      .then(() => undefined)
      .catch((error: unknown) => this.log.warn({ err: error, job: job.name }, 'background job failed; it will run again'));
    this.running.set(job.name, run);
    try {
      await run;
    } finally {
      this.running.delete(job.name);
      this.passesEnded.set(job.name, this.passes(job.name) + 1);
    }
  }
}

/**
 * Starts the app's runner when the app is ready and stops it when it closes. The runner is no
 * decorator: its jobs and queues hold the database, which a handler reaches only through its
 * request's admission. The plugins that add work get it in their options (app.ts).
 */
export const jobsPlugin = fastifyPlugin(
  async (app: FastifyInstance, options: { jobs: JobRunner }) => {
    app.addHook('onReady', async () => options.jobs.start());
    app.addHook('onClose', async () => options.jobs.stop());
  },
  { name: 'jobs' },
);
