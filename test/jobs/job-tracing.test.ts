import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { queueMail } from '../../src/mail/mail-outbox.js';
import { startTracing, type Tracing } from '../../src/tracing.js';
import { eventually } from '../helpers/eventually.js';
import { attribute, OtlpReceiver, type ExportedSpan } from '../helpers/otlp-receiver.js';
import { SmtpCatcher } from '../helpers/smtp-catcher.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';

const describeSpans = (spans: ExportedSpan[]) => spans.map((span) => `${span.name}${span.parentSpanId ? '' : ' (no parent)'}`).join(', ');

/** API.md section 17, "Tracing": a background job's run that finds nothing to do records no span. */
describe('tracing of background jobs', () => {
  const collector = new OtlpReceiver();
  const catcher = new SmtpCatcher();
  let tracing: Tracing;
  let testApp: TestApp;

  before(async () => {
    const endpoint = await collector.start();
    Object.assign(process.env, { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_TRACES_SAMPLER: 'always_on', OTEL_BSP_SCHEDULE_DELAY: '100' });
    tracing = (await startTracing(process.env))!;
    testApp = await buildTestApp({ tracing, environment: { SMTP_URL: await catcher.start() } });
  });
  after(async () => {
    await testApp.close();
    await tracing.shutdown();
    await collector.stop();
    await catcher.stop();
  });

  it('exports no span while the service idles, then traces a run that finds work with its statements as children', async () => {
    const { app, jobs, db } = testApp;
    // Idle: the outboxes polled on their own every second (three passes each), and every other
    // job (purges, expiries, rotations) run once, all with nothing to do.
    const polled = ['send-mail', 'deliver-webhooks'];
    const before = polled.map((name) => jobs.passes(name));
    await eventually(() => polled.every((name, index) => jobs.passes(name) >= before[index]! + 3) || undefined, 'three passes of each outbox', 20_000);
    for (const name of jobs.names) await jobs.runNow(name);
    await tracing.flush();
    assert.deepEqual(describeSpans(collector.spans), '', 'no span exported while idle');

    // Work: a mail queued outside any request; the outbox's next pass sends it.
    await db.transaction().execute((trx) => queueMail(trx, { to: 'traced@example.com', subject: 'Traced', text: 'the text', html: '<p>the html</p>' }));
    await eventually(() => catcher.mails.find((mail) => mail.to.includes('traced@example.com')), 'the mail');
    await eventually(() => db.selectFrom('email_outbox').select('id').where('to_address', '=', 'traced@example.com').where('status', '=', 'sent').executeTakeFirst(), 'the mail recorded sent');
    await tracing.flush();
    const attempt = await eventually(() => collector.spans.find((span) => span.name === 'send-mail attempt'), 'the attempt span');
    const run = collector.spans.find((span) => span.name === 'job send-mail');
    assert.ok(run, `the run that found the mail is a span (spans: ${describeSpans(collector.spans)})`);
    assert.equal(run.parentSpanId ?? '', '', 'a run is a root');
    const childrenOf = (parent: ExportedSpan) => collector.spans.filter((span) => span.traceId === parent.traceId && span.parentSpanId === parent.spanId);
    assert.ok(
      childrenOf(run).some((span) => span.name === 'UPDATE' && String(attribute(span, 'db.query.text')).includes('"email_outbox"')),
      `its claim is its child (children: ${describeSpans(childrenOf(run))})`,
    );
    assert.ok(childrenOf(attempt).some((span) => span.name === 'smtp send'), 'the send is a child of its attempt');
    assert.ok(
      childrenOf(attempt).some((span) => span.name === 'UPDATE' && String(attribute(span, 'db.query.text')).includes('"email_outbox"')),
      `recording the result is a child of the attempt (children: ${describeSpans(childrenOf(attempt))})`,
    );
    const ids = new Set(collector.spans.map((span) => span.spanId));
    const orphans = collector.spans.filter((span) => (span.parentSpanId ? !ids.has(span.parentSpanId) : span.kind === 3));
    assert.deepEqual(describeSpans(orphans), '', 'every statement span has its parent exported');
  });
});
