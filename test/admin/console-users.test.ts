import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { signDelivery } from '../../src/events/webhook-signature.js';
import { accessibilityViolationsOf, noChromium, useConsole } from '../helpers/console-browser.js';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createUser, login, loginAdmin, type Session } from '../helpers/test-app.js';
import { eventually } from '../helpers/eventually.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

describe('admin console: users, audit, webhooks and email links, in a real browser', { skip: noChromium }, () => {
  const ui = useConsole();
  let ann: Session;
  let bob: Session;
  const receiver = new WebhookReceiver();
  let hookUrl: string;
  before(async () => {
    ann = await createUser(ui.testApp.app, { name: 'Ann Example' });
    bob = await createUser(ui.testApp.app, { name: 'Bob Example' });
    hookUrl = await receiver.start();
  });
  after(() => receiver.stop());

  const userRow = (id: string) => ui.db().selectFrom('users').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const openUser = async (user: Session, name: string) => {
    await ui.page.goto(`${ui.baseUrl}/admin/#/users/${user.id}`);
    await ui.page.getByRole('heading', { name }).waitFor();
  };

  it('starts each customer page blank: an amount typed for one customer never reaches the next', async () => {
    const { page } = ui;
    await ui.logIn();
    await page.getByRole('heading', { name: 'Variants' }).waitFor();
    await openUser(ann, 'Ann Example');
    const adjust = page.getByRole('form', { name: 'Adjust balance' });
    await adjust.getByLabel(/^Amount/).fill('12.50');
    await adjust.getByLabel('Reason').fill('Refund for order 1');
    await page.getByRole('form', { name: 'Role' }).getByLabel('Role').selectOption('admin');
    await openUser(bob, 'Bob Example');
    assert.equal(await adjust.getByLabel(/^Amount/).inputValue(), '');
    assert.equal(await adjust.getByLabel('Reason').inputValue(), '');
    assert.equal(await page.getByRole('form', { name: 'Role' }).getByLabel('Role').inputValue(), 'user');
    await openUser(ann, 'Ann Example');
    assert.equal(await adjust.getByLabel(/^Amount/).inputValue(), '', 'nothing waits on the first page either');
    assert.equal((await userRow(ann.id)).role, 'user');
  });

  it('credits in dollars after a confirmation naming the customer, once for a double click', async () => {
    const { page } = ui;
    await openUser(bob, 'Bob Example');
    const adjust = page.getByRole('form', { name: 'Adjust balance' });
    const amountError = adjust.locator('.field', { has: page.getByLabel(/^Amount/) }).getByRole('alert');
    await adjust.getByLabel('Reason').fill('Goodwill credit');
    await adjust.getByLabel(/^Amount/).fill('12.505');
    await adjust.getByRole('button', { name: 'Apply…' }).click();
    assert.equal(await amountError.innerText(), 'USD has 2 decimal places.');
    await adjust.getByLabel(/^Amount/).fill('12.50');
    await adjust.getByRole('button', { name: 'Apply…' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText(`Bob Example (${bob.email})`).waitFor();
    await dialog.getByText('The balance becomes $12.50.').waitFor();
    await ui.shoot('balance-confirmation');
    await dialog.getByRole('button', { name: 'Credit $12.50' }).dblclick();
    await page.getByRole('status').getByText('Balance changed by $12.50; now $12.50.').waitFor();
    await page.getByRole('cell', { name: 'Goodwill credit' }).waitFor();
    await page.getByRole('row').filter({ hasText: 'Goodwill credit' }).getByRole('link', { name: ADMIN_EMAIL }).waitFor();
    const entries = await ui.db().selectFrom('balance_ledger').selectAll().where('user_id', 'in', [ann.id, bob.id]).execute();
    assert.deepEqual(entries.map((entry) => [entry.user_id, entry.delta, entry.reason]), [[bob.id, 1250, 'Goodwill credit']], 'one credit, to Bob');
    await page.getByTestId('balance').getByText('$12.50').waitFor();
    assert.equal(await adjust.getByLabel(/^Amount/).inputValue(), '', 'the form is cleared after the change');

    // An overdraw is refused before any confirmation (#56 friction 6), and said in dollars.
    await adjust.getByLabel(/^Amount/).fill('-20');
    await adjust.getByLabel('Reason').fill('Too much');
    await adjust.getByRole('button', { name: 'Apply…' }).click();
    assert.equal(await amountError.innerText(), 'The balance is $12.50: a debit of $20.00 would take it below zero.');
    assert.equal(await dialog.count(), 0, 'no confirmation is offered for a debit the balance cannot cover');
    assert.equal((await userRow(bob.id)).balance, 1250);

    // One the page did not know about (the balance fell meanwhile) is still refused by the service, after the confirmation.
    const otherDesk = await loginAdmin(ui.testApp.app);
    const elsewhere = await ui.testApp.app.inject({
      method: 'PUT',
      url: `/api/users/${bob.id}/balance`,
      headers: { ...otherDesk.auth, 'idempotency-key': randomUUID() },
      payload: { delta: -750, reason: 'Debited elsewhere' },
    });
    assert.equal(elsewhere.statusCode, 200, elsewhere.body);
    // That desk signs out, so the admin's sessions (listed later on the profile) are this browser's alone.
    await ui.testApp.app.inject({ method: 'POST', url: '/api/auth/logout', payload: { refresh_token: otherDesk.refreshToken } });
    await adjust.getByLabel(/^Amount/).fill('-10');
    await adjust.getByRole('button', { name: 'Apply…' }).click();
    await dialog.getByRole('button', { name: 'Debit $10.00' }).click();
    await dialog.getByRole('alert').getByText('The balance is $5.00: a debit of $10.00 would take it below zero.').waitFor();
    assert.equal(await dialog.getByText('500').count(), 0);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    assert.equal((await userRow(bob.id)).balance, 500);
  });

  it('changes a role only after a confirmation with a reason, which the audit log shows', async () => {
    const { page } = ui;
    const roleForm = page.getByRole('form', { name: 'Role' });
    await roleForm.getByLabel('Role').selectOption('admin');
    assert.equal((await userRow(bob.id)).role, 'user', 'choosing in the list saves nothing');
    await roleForm.getByRole('button', { name: 'Change role…' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    assert.equal((await userRow(bob.id)).role, 'user', 'Cancel changes nothing');

    await roleForm.getByLabel('Role').selectOption('manager');
    await roleForm.getByRole('button', { name: 'Change role…' }).click();
    await dialog.getByRole('button', { name: 'Make manager' }).click();
    assert.equal((await userRow(bob.id)).role, 'user', 'no reason, no change');
    await dialog.getByLabel('Reason').fill('Runs the Saturday shift');
    await dialog.getByRole('button', { name: 'Make manager' }).click();
    await page.getByRole('status').getByText('Role changed to manager.').waitFor();
    assert.equal((await userRow(bob.id)).role, 'manager');
    const event = await ui.db().selectFrom('events').selectAll().where('subject_id', '=', bob.id).where('type', '=', 'user.role_changed').executeTakeFirstOrThrow();
    assert.equal(event.data.reason, 'Runs the Saturday shift');

    await page.getByRole('link', { name: 'History of this user' }).click();
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    await page.getByText('“Runs the Saturday shift”').waitFor();
    await page.getByRole('cell', { name: 'user.balance_changed' }).first().waitFor();
    assert.equal(await page.getByRole('search', { name: 'Filter events' }).getByLabel('Subject id').inputValue(), bob.id);
    // #33 point 8: names instead of ids, and before/after as a diff with amounts as money.
    const credited = page.getByRole('row').filter({ hasText: 'Goodwill credit' });
    await credited.getByRole('link', { name: `Bob Example (${bob.email})` }).waitFor();
    await credited.getByRole('link', { name: ADMIN_EMAIL }).waitFor();
    const diff = credited.locator('table.diff');
    assert.deepEqual(await diff.locator('tbody tr').first().locator('th, td').allTextContents(), ['balance', '$0.00', '$12.50']);
    const promoted = page.getByRole('row').filter({ hasText: 'user.role_changed' });
    assert.deepEqual(await promoted.locator('table.diff tbody tr').first().locator('th, td').allTextContents(), ['role', 'user', 'manager']);
    assert.deepEqual(await accessibilityViolationsOf(page), [], 'the audit log');
    await page.getByRole('search', { name: 'Filter events' }).getByLabel('Type').selectOption('user.role_changed');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('1 event', { exact: true }).waitFor();
    assert.equal(await page.getByRole('cell', { name: 'user.balance_changed' }).count(), 0);
    // The audit log's pictures come from console-audit-log.test.ts, with events of every kind.
    await page.setViewportSize({ width: 390, height: 844 });
    assert.ok((await ui.sidewaysOverflow()) <= 0, 'the audit log scrolls nothing sideways at 390px');
    assert.deepEqual(await accessibilityViolationsOf(page), [], 'the audit log at 390px');
    await page.setViewportSize({ width: 1280, height: 900 });
    // "Who" takes an email: the admin's changes to Bob, found by the admin's address; Bob's own registration is not among them.
    const filters = page.getByRole('search', { name: 'Filter events' });
    await filters.getByLabel('Type').selectOption('');
    await filters.getByRole('button', { name: 'Filter' }).click();
    await page.getByRole('cell', { name: 'user.registered' }).waitFor();
    await filters.getByLabel('Who (email or API client)').fill(ADMIN_EMAIL.toUpperCase());
    await filters.getByRole('button', { name: 'Filter' }).click();
    const adminRow = await ui.db().selectFrom('users').select('id').where('email', '=', ADMIN_EMAIL).executeTakeFirstOrThrow();
    await page.waitForURL((url) => url.hash.includes(`actor_id=${adminRow.id}`));
    await page.getByRole('cell', { name: 'user.registered' }).waitFor({ state: 'detached' });
    await page.getByRole('cell', { name: 'user.role_changed' }).waitFor();
    await page.getByRole('search', { name: 'Filter events' }).getByLabel('Who (email or API client)').fill('nobody@example.com');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByRole('alert').getByText('No user or API client is nobody@example.com.').waitFor();
  });

  it('lists sessions and signs out one, then all, after confirming', async () => {
    const { page } = ui;
    const second = await login(ui.testApp.app, bob.email, bob.password);
    await openUser(bob, 'Bob Example');
    const sessions = page.getByRole('region', { name: 'Sessions' });
    const sessionRows = sessions.locator('tbody tr');
    await sessionRows.nth(1).waitFor();
    assert.equal(await sessionRows.count(), 2);
    await sessionRows.first().getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Sign out this session' }).click();
    await page.getByRole('status').getByText('The session has ended.').waitFor();
    assert.equal(await sessionRows.count(), 1);
    const stillOpen = await ui.db().selectFrom('sessions').select('id').where('user_id', '=', bob.id).where('ended_at', 'is', null).execute();
    assert.equal(stillOpen.length, 1);
    await sessions.getByRole('button', { name: 'Sign out everywhere…' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Sign out everywhere' }).click();
    await sessions.getByText('No open sessions.').waitFor();
    for (const session of [bob, second]) {
      const profile = await ui.testApp.app.inject({ method: 'GET', url: '/api/users/profile', headers: session.auth });
      assert.equal(profile.statusCode, 401);
    }
  });

  it('suspends after a confirmation, and resends the verification link, which verifies the address from the email', async () => {
    const { page } = ui;
    const statusForm = page.getByRole('form', { name: 'Status' });
    await statusForm.getByLabel('Status').selectOption('suspended');
    await statusForm.getByRole('button', { name: 'Change status…' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Reason').fill('Chargeback under review');
    await dialog.getByRole('button', { name: 'Suspend' }).click();
    await page.getByRole('status').getByText('Status changed to suspended.').waitFor();
    assert.equal((await userRow(bob.id)).status, 'suspended');
    await statusForm.getByLabel('Status').selectOption('active');
    await statusForm.getByRole('button', { name: 'Change status…' }).click();
    await dialog.getByLabel('Reason').fill('Resolved');
    await dialog.getByRole('button', { name: 'Reactivate' }).click();
    await page.getByRole('status').getByText('Status changed to active.').waitFor();

    await page.getByText('not verified').waitFor();
    const mailsBefore = ui.smtp.mails.length;
    await page.getByRole('button', { name: 'Resend verification link' }).click();
    await dialog.getByRole('button', { name: 'Send link' }).click();
    await page.getByRole('status').getByText(`A verification link is on its way to ${bob.email}.`).waitFor();
    const link = await ui.linkFor(bob.email, '/admin/#/verify-email?token=', mailsBefore);
    assert.ok(link.startsWith(`${ui.baseUrl}/admin/#/verify-email?token=`), link);
    await page.goto(link);
    await page.getByText('Your email address is verified.').waitFor();
    assert.equal((await userRow(bob.id)).email_verified, true);
  });

  it('resets a password from the link of a real email', async () => {
    const { page } = ui;
    const requested = await ui.testApp.app.inject({ method: 'POST', url: '/api/auth/password-reset', payload: { email: ann.email } });
    assert.equal(requested.statusCode, 202);
    const link = await ui.linkFor(ann.email, '/admin/#/reset-password?token=');
    await page.goto(link);
    const form = page.getByRole('form', { name: 'Reset password' });
    await form.getByLabel(/^New password \(/).fill('fresh-password-42');
    await form.getByLabel('New password again').fill('fresh-password-43');
    await form.getByRole('button', { name: 'Set password' }).click();
    await form.getByText('The two passwords differ.').waitFor();
    await form.getByLabel('New password again').fill('fresh-password-42');
    await form.getByRole('button', { name: 'Set password' }).click();
    await page.getByText('Your password is changed and every session was signed out.').waitFor();
    await ui.shoot('password-reset');
    const relogin = await ui.testApp.app.inject({ method: 'POST', url: '/api/auth/login', payload: { email: ann.email, password: 'fresh-password-42' } });
    assert.equal(relogin.statusCode, 200);
    // The same address again: a fresh load, as opening the email's link a second time would be.
    await page.goto('about:blank');
    await page.goto(link);
    await form.getByLabel(/^New password \(/).fill('another-password-1');
    await form.getByLabel('New password again').fill('another-password-1');
    await form.getByRole('button', { name: 'Set password' }).click();
    await form.getByText(/Ask for a new link/).waitFor();
  });

  it('sends a reset link from "Forgot password?" on the login page, at 390px', async () => {
    // A browser of its own, signed out, the size of a phone.
    const context = await ui.browser.newContext({ viewport: { width: 390, height: 844 } });
    try {
      const page = await context.newPage();
      page.setDefaultTimeout(10_000);
      await page.goto(`${ui.baseUrl}/admin/`);
      const login = page.getByRole('form', { name: 'Log in' });
      await login.getByLabel('Email').fill(ann.email);
      await login.getByRole('button', { name: 'Forgot password?' }).click();
      const forgotten = page.getByRole('form', { name: 'Reset password' });
      assert.equal(await forgotten.getByLabel('Email').inputValue(), ann.email, 'the address typed to log in is kept');
      const mailsBefore = ui.smtp.mails.length;
      await forgotten.getByRole('button', { name: 'Email me a link' }).click();
      await forgotten.getByRole('status').getByText(`If ${ann.email} has an account, a link to choose a new password is on its way.`).waitFor();
      assert.ok((await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)) <= 0, 'nothing off-screen at 390px');
      const link = await ui.linkFor(ann.email, '/admin/#/reset-password?token=', mailsBefore);
      await page.goto(link);
      const reset = page.getByRole('form', { name: 'Reset password' });
      await reset.getByLabel(/^New password \(8 to 128 characters\)/).fill('forgotten-password-7');
      await reset.getByLabel('New password again').fill('forgotten-password-7');
      await reset.getByRole('button', { name: 'Set password' }).click();
      await page.getByText('Your password is changed and every session was signed out.').waitFor();
      const relogin = await ui.testApp.app.inject({ method: 'POST', url: '/api/auth/login', payload: { email: ann.email, password: 'forgotten-password-7' } });
      assert.equal(relogin.statusCode, 200);

      await page.goto(`${ui.baseUrl}/admin/`);
      await page.getByRole('form', { name: 'Log in' }).getByRole('button', { name: 'Forgot password?' }).click();
      assert.deepEqual(await accessibilityViolationsOf(page), [], 'the reset request form');
      await page.getByRole('button', { name: 'Back to log in' }).click();
      await page.getByRole('form', { name: 'Log in' }).waitFor();
    } finally {
      await context.close();
    }
  });

  it('lists users with a count in words, a visible link for a blank name, and cards at 390px', async () => {
    const { page } = ui;
    await ui.db().updateTable('users').set({ name: '   ' }).where('id', '=', ann.id).execute();
    await page.goto(`${ui.baseUrl}/admin/#/users`);
    const search = page.getByRole('search');
    await search.getByLabel('Search').fill(ann.email);
    await search.getByRole('button', { name: 'Search' }).click();
    await page.getByText('1 user', { exact: true }).waitFor();
    await page.getByRole('link', { name: ann.email }).waitFor();
    // #56 friction 4: an address longer than a phone is wide wraps in its card.
    await createUser(ui.testApp.app, { name: 'Long Address', email: `a.customer.with.a.rather.long.address.${Date.now()}@subsidiary.example.com` });
    await search.getByLabel('Search').fill('example.com');
    await search.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: 'Bob Example' }).waitFor();
    await page.getByRole('link', { name: 'Long Address' }).waitFor();
    await ui.shoot('users');
    await ui.shoot('users-390', 390);
    assert.ok((await ui.sidewaysOverflow()) <= 0, 'the page does not scroll sideways at 390px');
    const balance = page.locator('td[data-label="Balance"]').first();
    const box = await balance.boundingBox();
    assert.ok(box && box.x >= 0 && box.x + box.width <= 390, 'every column is on screen');
    await openUser(bob, 'Bob Example');
    await ui.shoot('user-390', 390);
    assert.ok((await ui.sidewaysOverflow()) <= 0, "a user's page does not scroll sideways at 390px");
    await page.setViewportSize({ width: 1280, height: 900 });
    await ui.shoot('user');
  });

  it('creates a webhook showing its secret once (copied, its decoding explained), sends a delivery again, pings, edits and disables it', async () => {
    const { page } = ui;
    await page.getByRole('link', { name: 'Webhooks' }).click();
    const create = page.getByRole('form', { name: 'Create webhook' });
    await create.getByLabel('URL').fill(hookUrl);
    // #56 friction 8: events are checked by area, not typed; every event until one says otherwise, and never none.
    const events = create.getByRole('group', { name: 'Events to send' });
    const every = events.getByLabel('Every event, including types added later');
    assert.ok(await every.isChecked());
    assert.ok(await events.getByRole('group', { name: 'Users' }).getByLabel('registered', { exact: true }).isDisabled(), 'no single type while every event is chosen');
    await every.uncheck();
    await create.getByRole('button', { name: 'Create webhook' }).click();
    assert.equal(await events.getByRole('alert').innerText(), 'Choose at least one event, or every event.');
    assert.equal(await ui.db().selectFrom('webhooks').select('id').execute().then((rows) => rows.length), 0, 'nothing was sent');
    await events.getByRole('group', { name: 'Users' }).getByLabel('registered', { exact: true }).check();
    await create.getByLabel(/^Description/).fill('CRM sync');
    await create.getByRole('button', { name: 'Create webhook' }).click();
    const secret = await page.getByTestId('webhook-secret').innerText();
    assert.deepEqual((await ui.db().selectFrom('webhooks').select('events').executeTakeFirstOrThrow()).events, ['user.registered']);
    assert.equal(await events.getByRole('alert').count(), 0);
    assert.ok(await every.isChecked(), 'the next webhook starts from every event again');
    assert.equal(await events.getByRole('group', { name: 'Users' }).getByLabel('registered', { exact: true }).isChecked(), true, 'shown checked (and disabled) under every event');
    assert.equal(await create.getByLabel('URL').inputValue(), '');
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    await page.getByRole('button', { name: 'Copy secret' }).click();
    await page.getByText('Copied.').waitFor();
    await create.getByText('base64-decoded').waitFor();
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secret);
    await page.getByRole('cell', { name: 'CRM sync' }).waitFor();

    receiver.answer = () => 503;
    await createUser(ui.testApp.app, { name: 'Webhook trigger' });
    await ui.testApp.jobs.runNow('deliver-webhooks');
    // The delivery loop may have sent it a moment before runNow looked: wait for it, with a deadline.
    for (let waited = 0; receiver.received.length === 0 && waited < 15_000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
    const delivery = receiver.received.at(-1)!;
    const signature = signDelivery(secret, String(delivery.headers['webhook-id']), Number(delivery.headers['webhook-timestamp']), delivery.body);
    assert.equal(delivery.headers['webhook-signature'], signature, 'the secret shown signs the deliveries');
    await page.getByRole('button', { name: 'Deliveries' }).click();
    const deliveries = page.getByRole('region', { name: 'Deliveries' });
    await deliveries.getByRole('cell', { name: 'user.registered', exact: true }).waitFor();
    await deliveries.getByRole('cell', { name: '503' }).waitFor();
    // Its own retry (5 s after the first attempt) is put an hour off, so only the button below sends it again.
    await ui.db().updateTable('webhook_deliveries').set({ next_attempt_at: new Date(Date.now() + 3_600_000) }).where('status', '=', 'pending').execute();
    assert.equal(await deliveries.getByRole('heading').innerText(), `Deliveries to ${hookUrl}`, 'the panel names its webhook');
    await ui.shoot('webhooks');
    await ui.shoot('webhooks-390', 390);
    assert.ok((await ui.sidewaysOverflow()) <= 0, 'the webhooks page, its event checklist included, does not scroll sideways at 390px');
    await page.setViewportSize({ width: 1280, height: 900 });

    // Sent again at once, on request: the same delivery (its id), a second attempt, answered 200 now.
    receiver.answer = () => 200;
    const receivedBefore = receiver.received.length;
    await deliveries.getByRole('button', { name: 'Send the user.registered delivery again' }).click();
    await deliveries.getByRole('status').getByText('The user.registered delivery is being sent again.').waitFor();
    const resent = await eventually(() => receiver.received[receivedBefore], 'the delivery sent again');
    assert.equal(resent.headers['webhook-id'], delivery.headers['webhook-id']);
    const retried = await eventually(() => ui.db().selectFrom('webhook_deliveries').selectAll().where('status', '=', 'succeeded').executeTakeFirst(), 'the delivery marked succeeded');
    assert.equal(retried.attempts, 2);

    // A ping goes to this webhook, though it subscribes only to user.registered, and shows among its deliveries.
    await page.getByRole('button', { name: 'Ping…' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Send ping' }).click();
    await page.getByRole('status').getByText(`A ping is on its way to ${hookUrl}.`).waitFor();
    await deliveries.getByRole('cell', { name: 'webhook.ping', exact: true }).waitFor();
    await eventually(() => receiver.received.find((received) => JSON.parse(received.body).type === 'webhook.ping'), 'the ping');

    // Edited in place: URL, events and description, with If-Match.
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    const edit = page.getByRole('form', { name: 'Edit webhook' });
    await edit.getByRole('group', { name: 'Users' }).getByLabel('updated', { exact: true }).check();
    await edit.getByLabel(/^Description/).fill('CRM sync, v2');
    await edit.getByRole('button', { name: 'Save webhook' }).click();
    await page.getByRole('status').getByText(`Saved the webhook to ${hookUrl}.`).waitFor();
    await page.getByRole('cell', { name: 'CRM sync, v2' }).waitFor();
    const edited = await ui.db().selectFrom('webhooks').selectAll().executeTakeFirstOrThrow();
    assert.deepEqual([edited.events, edited.description, edited.enabled], [['user.registered', 'user.updated'], 'CRM sync, v2', true]);

    await page.getByRole('button', { name: 'Disable…' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('status').getByText(`Disabled the webhook to ${hookUrl}.`).waitFor();
    const stored = await ui.db().selectFrom('webhooks').selectAll().executeTakeFirstOrThrow();
    assert.equal(stored.enabled, false);
    await page.reload();
    await page.getByRole('cell', { name: 'disabled' }).waitFor();
    assert.equal(await page.getByTestId('webhook-secret').count(), 0, 'the secret is never shown again');
  });

  it('shows staff their own sessions by browser and system, signs out another one, then all others', async () => {
    const { page } = ui;
    const signInFrom = async (userAgent: string) => {
      const response = await ui.testApp.app.inject({ method: 'POST', url: '/api/auth/login', headers: { 'user-agent': userAgent }, payload: { email: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
      assert.equal(response.statusCode, 200);
      return JSON.parse(Buffer.from(response.json().access_token.split('.')[1], 'base64url').toString()).sid as string;
    };
    const iphone = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';
    const phoneSid = await signInFrom(iphone);
    await page.goto(`${ui.baseUrl}/admin/#/profile`);
    await page.getByText('Your email address is verified.').waitFor();
    const sessions = page.getByRole('region', { name: 'My sessions' });
    await sessions.getByRole('cell', { name: 'this browser' }).waitFor();
    const phoneRow = sessions.locator('tbody tr').filter({ hasText: 'Safari 17 on iOS' });
    assert.equal(await phoneRow.count(), 1, 'the phone is named by its browser and system');
    assert.match(await sessions.locator('tbody tr').filter({ hasText: 'this browser' }).innerText(), /Chrome \d+ on Linux/);
    await phoneRow.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('dialog').getByText('The session from Safari 17 on iOS ends at once.').waitFor();
    await page.getByRole('dialog').getByRole('button', { name: 'Sign out this session' }).click();
    await sessions.getByRole('status').getByText('The session has ended.').waitFor();
    const ended = await ui.db().selectFrom('sessions').select('ended_at').where('id', '=', phoneSid).executeTakeFirstOrThrow();
    assert.notEqual(ended.ended_at, null, "the other session ended; this browser's goes on");

    const others = [await signInFrom('curl/8.5.0'), await signInFrom(iphone)];
    await page.reload();
    await sessions.locator('tbody tr').filter({ hasText: 'curl/8.5.0' }).waitFor();
    await sessions.getByRole('button', { name: 'Sign out all others…' }).click();
    await page.getByRole('dialog').getByText('Every other session of yours (2) ends at once; this browser stays signed in.').waitFor();
    await page.getByRole('dialog').getByRole('button', { name: 'Sign out all others' }).click();
    await sessions.getByRole('status').getByText('The 2 other sessions have ended.').waitFor();
    const stillOpen = await ui.db().selectFrom('sessions').select('id').where('id', 'in', others).where('ended_at', 'is', null).execute();
    assert.deepEqual(stillOpen, []);
    assert.equal(await sessions.locator('tbody tr').count(), 1, 'only this browser is left');
    assert.equal(await sessions.getByRole('button', { name: 'Sign out all others…' }).count(), 0);
    await sessions.getByRole('cell', { name: 'this browser' }).waitFor();
  });

  it('asks for the current password when staff change their own email, and sends it (API.md section 10)', async () => {
    const { page } = ui;
    await page.goto(`${ui.baseUrl}/admin/#/profile`);
    const form = page.getByRole('form', { name: 'Profile' });
    const passwordField = form.getByLabel('Current password (to change the email)');
    await form.getByLabel('Email', { exact: true }).waitFor();
    assert.equal(await passwordField.count(), 0, 'not asked while the email stays');
    const changeEmailTo = async (email: string, password: string) => {
      await form.getByLabel('Email', { exact: true }).fill(email);
      await passwordField.fill(password);
      await form.getByRole('button', { name: 'Save profile' }).click();
    };
    const admin = await ui.db().selectFrom('users').select(['id', 'email']).where('email', '=', ADMIN_EMAIL).executeTakeFirstOrThrow();

    await changeEmailTo('console-admin@example.com', 'not-the-password');
    await form.getByRole('alert').getByText('The current password is wrong.').waitFor();
    assert.doesNotMatch(await form.getByRole('alert').innerText(), /wrong_password/, 'no code for developers (#56)');
    assert.equal((await userRow(admin.id)).email, ADMIN_EMAIL, 'a wrong password changes nothing');

    await changeEmailTo('console-admin@example.com', ADMIN_PASSWORD);
    await form.getByRole('status').getByText('Saved.').waitFor();
    assert.equal((await userRow(admin.id)).email, 'console-admin@example.com');
    assert.equal(await form.getByRole('alert').count(), 0, 'the earlier problem is cleared');
    assert.equal(await passwordField.count(), 0, 'the saved email is the current one again');

    await changeEmailTo(ADMIN_EMAIL, ADMIN_PASSWORD);
    // The password field goes once the saved email is the one typed.
    await passwordField.waitFor({ state: 'detached' });
    await form.getByRole('status').getByText('Saved.').waitFor();
    assert.equal((await userRow(admin.id)).email, ADMIN_EMAIL);
  });

  it("passes axe-core's WCAG 2.1 AA rules on every page, and its dialogs work by keyboard", async () => {
    const { page } = ui;
    // Each page, its heading, and the navigation link marked as the section shown.
    const pages: [string, string, string][] = [
      ['#/variants', 'Variants', 'Variants'],
      ['#/users', 'Users', 'Users'],
      [`#/users/${bob.id}`, 'Bob Example', 'Users'],
      ['#/events', 'Audit log', 'Audit log'],
      ['#/webhooks', 'Webhooks', 'Webhooks'],
      ['#/profile', 'My profile', 'My profile'],
    ];
    for (const [hash, heading, section] of pages) {
      await page.goto(`${ui.baseUrl}/admin/${hash}`);
      await page.getByRole('heading', { name: heading, exact: true }).waitFor();
      assert.deepEqual(await page.getByRole('navigation', { name: 'Main' }).locator('a[aria-current="page"]').allInnerTexts(), [section], hash);
      assert.deepEqual(await ui.accessibilityViolations(), [], hash);
    }
    await page.goto(`${ui.baseUrl}/admin/#/variants`);
    await page.getByRole('button', { name: 'New variant' }).click();
    await page.getByRole('form', { name: 'Create variant' }).waitFor();
    assert.deepEqual(await ui.accessibilityViolations(), [], 'the side panel');

    await page.goto(`${ui.baseUrl}/admin/#/users/${bob.id}`);
    await page.getByRole('heading', { name: 'Bob Example' }).waitFor();
    const roleSelect = page.getByRole('form', { name: 'Role' }).getByLabel('Role');
    await roleSelect.selectOption('user');
    await roleSelect.focus();
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog');
    await dialog.waitFor();
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('name')), 'reason', 'focus moves into the dialog');
    assert.deepEqual(await ui.accessibilityViolations(), [], 'the confirmation dialog');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Change role…', 'focus returns to the button that opened it');
    assert.equal((await userRow(bob.id)).role, 'manager', 'Escape changes nothing');
  });

  it("gives a manager the variants and users, without an admin's pages and actions", async () => {
    const { page } = ui;
    const admin = await login(ui.testApp.app, ADMIN_EMAIL, ADMIN_PASSWORD);
    const created = await ui.testApp.app.inject({ method: 'POST', url: '/api/variants', headers: admin.auth, payload: { product_id: 'managed', sku: 'MANAGED-1', name: 'Managed', price: 500 } });
    assert.equal(created.statusCode, 201);
    await page.getByRole('button', { name: 'Log out' }).click();
    await ui.logIn(bob.email, bob.password);
    await page.getByRole('heading', { name: 'Variants' }).waitFor();
    const nav = page.getByRole('navigation', { name: 'Main' });
    assert.deepEqual(await nav.getByRole('link').allInnerTexts(), ['Variants', 'Locations', 'Transfers', 'Reservations', 'Imports', 'Users', 'My profile']);
    await page.getByRole('button', { name: 'Open MANAGED-1' }).click();
    await page.getByRole('form', { name: 'Edit variant' }).waitFor();
    assert.equal(await page.getByRole('link', { name: 'History of this variant' }).count(), 0, 'the audit log is for admins');
    await openUser(ann, ann.email);
    assert.equal(await page.getByRole('form', { name: 'Adjust balance' }).count(), 0);
    assert.equal(await page.getByRole('form', { name: 'Role' }).count(), 0);
  });

  it('tells a customer that the console is for staff', async () => {
    const { page } = ui;
    await page.getByRole('button', { name: 'Log out' }).click();
    await ui.logIn(ann.email, 'forgotten-password-7');
    await page.getByRole('heading', { name: 'This console is for staff' }).waitFor();
    assert.equal(await page.getByRole('link', { name: 'Users' }).count(), 0);
    assert.deepEqual(await ui.accessibilityViolations(), [], 'the staff-only page');
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('form', { name: 'Log in' }).waitFor();
    assert.deepEqual(await ui.accessibilityViolations(), [], 'the login page');
  });
});
