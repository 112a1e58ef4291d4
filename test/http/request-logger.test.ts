import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import Fastify, { LogController } from 'fastify';
import pino from 'pino';
import { requestLoggerFactory } from '../../src/http/request-logger.js';

function appLoggingTo(lines: Record<string, unknown>[], level: string, children = { made: 0 }) {
  const logger = pino({ level, redact: ['secret'] }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  const makeChild = logger.child;
  // Children inherit this method: each is made from the logger it is called on.
  logger.child = function (this: typeof logger, ...args: Parameters<typeof makeChild>) {
    children.made++;
    return makeChild.apply(this, args);
  } as typeof logger.child;
  const app = Fastify({ loggerInstance: logger, childLoggerFactory: requestLoggerFactory, logController: new LogController({ disableRequestLogging: true }), genReqId: () => 'request-7' });
  app.get('/', async (request) => {
    request.log.debug({ secret: 'hidden' }, 'debug line');
    request.log.info({ secret: 'hidden' }, 'info line');
    request.log.child({ part: 'inner' }).warn('warn line');
    return { level: request.log.level };
  });
  app.get('/quiet', async (request) => {
    request.log.info('info line');
    return {};
  });
  return app;
}

describe("a request's logger (made when first needed)", () => {
  it('writes what its level lets through, with the request id, redacted as the parent is', async () => {
    const lines: Record<string, unknown>[] = [];
    const app = appLoggingTo(lines, 'info');
    const reply = await app.inject({ method: 'GET', url: '/' });
    assert.deepEqual(reply.json(), { level: 'info' });
    assert.deepEqual(
      lines.map((line) => [line.msg, line.reqId, line.secret, line.part]),
      [
        ['info line', 'request-7', '[Redacted]', undefined],
        ['warn line', 'request-7', undefined, 'inner'],
      ],
    );
    await app.close();
  });

  it('writes nothing below its level, and makes no pino child for a request that logs nothing', async () => {
    const lines: Record<string, unknown>[] = [];
    const children = { made: 0 };
    const app = appLoggingTo(lines, 'error', children);
    await app.ready();
    children.made = 0;
    await app.inject({ method: 'GET', url: '/quiet' });
    assert.equal(children.made, 0);
    await app.inject({ method: 'GET', url: '/' });
    assert.deepEqual(lines, []);
    await app.close();
  });
});
