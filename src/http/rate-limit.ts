import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import fastifyPlugin from 'fastify-plugin';
import { Redis } from 'ioredis';
import { AppError } from './errors.js';

const WINDOW_MS = 60_000;
// No request waits longer than this on Redis; past it the instance counts on its own.
const REDIS_WAIT_MS = 100;

interface Count {
  count: number;
  resetInMs: number;
}

/** Fixed one-minute windows kept in this process: the fallback, and the store without Redis. */
class LocalCounters {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
  private readonly sweeper = setInterval(() => this.sweep(), WINDOW_MS);

  constructor() {
    this.sweeper.unref();
  }

  increment(key: string): Count {
    const now = Date.now();
    let window = this.windows.get(key);
    if (!window || window.resetAt <= now) {
      window = { count: 0, resetAt: now + WINDOW_MS };
      this.windows.set(key, window);
    }
    window.count += 1;
    return { count: window.count, resetInMs: window.resetAt - now };
  }

  close(): void {
    clearInterval(this.sweeper);
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, window] of this.windows) if (window.resetAt <= now) this.windows.delete(key);
  }
}

const INCREMENT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {count, redis.call('PTTL', KEYS[1])}`;

/**
 * Counters shared through Redis. When Redis does not answer within REDIS_WAIT_MS (down, slow,
 * unreachable), the local counters take over for that request, so there is always a limit;
 * the outage is logged once, and its end once.
 */
class SharedCounters {
  private readonly redis: Redis;
  private outage = false;

  constructor(
    url: string,
    private readonly local: LocalCounters,
    private readonly log: FastifyBaseLogger,
  ) {
    this.redis = new Redis(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: REDIS_WAIT_MS,
      connectTimeout: 1000,
      retryStrategy: (attempt) => Math.min(attempt * 500, 5000),
    });
    this.redis.on('error', (error: Error) => this.markOutage(error));
  }

  async increment(key: string): Promise<Count> {
    try {
      const [count, ttl] = (await this.redis.eval(INCREMENT_SCRIPT, 1, `shop-rate-limit:${key}`, WINDOW_MS)) as [number, number];
      if (this.outage) {
        this.outage = false;
        this.log.info('Redis answers again; rate-limit counters are shared again');
      }
      return { count, resetInMs: ttl > 0 ? ttl : WINDOW_MS };
    } catch (error) {
      this.markOutage(error as Error);
      return this.local.increment(key);
    }
  }

  close(): void {
    this.redis.disconnect();
  }

  private markOutage(error: Error): void {
    if (this.outage) return;
    this.outage = true;
    this.log.warn({ err: error }, 'Redis does not answer; each instance counts rate limits on its own until it does');
  }
}

/** One request counted against a budget whose size is not known yet; `within` answers once it is. */
export interface CountedRequest {
  /** The request's place in the budget's window (1 for the first). */
  readonly count: number;
  /** Over `max` a minute: 429 with Retry-After. */
  within(max: number): void;
}

export class RateLimiter {
  constructor(private readonly counters: { increment(key: string): Count | Promise<Count> }) {}

  /** Counts one request against `key`'s budget of `max` a minute; over it, 429 with Retry-After. */
  async spend(key: string, max: number): Promise<void> {
    (await this.count(key)).within(max);
  }

  /** Counts one request against `key`'s budget, to be judged once its size is known (an API client's own limit). */
  async count(key: string): Promise<CountedRequest> {
    const { count, resetInMs } = await this.counters.increment(key);
    return {
      count,
      within: (max) => {
        if (count <= max) return;
        const seconds = Math.max(1, Math.ceil(resetInMs / 1000));
        throw new AppError('rate_limited', `Too many requests; retry in ${seconds} s.`, undefined, { 'retry-after': String(seconds) });
      },
    };
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    rateLimiter: RateLimiter;
  }
}

/** The one rate limiter: counters per key and minute, in Redis when REDIS_URL is set. */
export const rateLimitPlugin = fastifyPlugin(
  async (app: FastifyInstance, options: { redisUrl: string | undefined }) => {
    const local = new LocalCounters();
    const shared = options.redisUrl ? new SharedCounters(options.redisUrl, local, app.log) : undefined;
    app.decorate('rateLimiter', new RateLimiter(shared ?? local));
    app.addHook('onClose', async () => {
      shared?.close();
      local.close();
    });
  },
  { name: 'rate-limit' },
);
