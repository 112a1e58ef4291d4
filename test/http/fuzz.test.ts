import { after, before, describe, it } from 'node:test';
import { fuzzRequests } from '../fuzz/fuzz-requests.js';
import { seedFuzzTargets } from '../fuzz/targets.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';

// A small sample on every run; `npm run fuzz` sends 10,000.
describe('generated requests', () => {
  let testApp: TestApp;
  before(async () => {
    testApp = await buildTestApp();
  });
  after(() => testApp.close());

  it('never get a 5xx; every error is a valid problem+json; every 2xx body matches its schema', async () => {
    const targets = await seedFuzzTargets(testApp.app);
    await fuzzRequests(testApp.app, targets, Number(process.env.FUZZ_RUNS ?? 400));
  });
});
