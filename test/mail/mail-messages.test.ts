import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { IntlMessageFormat } from 'intl-messageformat';
import { MAIL_LOCALES, MAIL_MESSAGE_KEYS, mailCatalogueOf } from '../../src/mail/mail-messages.js';
import { emailCodeMail, passwordResetMail, verificationMail } from '../../src/mail/mail-templates.js';

const argumentsOf = (text: string) =>
  new IntlMessageFormat(text, 'en')
    .getAst()
    .flatMap((element) => ('value' in element && element.type !== 0 ? [String(element.value)] : []))
    .sort();

/** API.md section 18: the emails the hosted pages cause are in the page's language. */
describe('the emails of the hosted pages, in English and German', () => {
  it('writes every message in every language, with the arguments of the English one', () => {
    for (const locale of MAIL_LOCALES) {
      const catalogue = mailCatalogueOf(locale);
      assert.deepEqual(Object.keys(catalogue).sort(), [...MAIL_MESSAGE_KEYS].sort(), locale);
      for (const key of MAIL_MESSAGE_KEYS) assert.deepEqual(argumentsOf(catalogue[key]), argumentsOf(mailCatalogueOf('en')[key]), `${locale} ${key}`);
    }
  });

  it('sends the code, the reset link and the verification link in German when asked, and in English by default', () => {
    const until = new Date('2026-11-29T10:15:00Z');
    const german = emailCodeMail('kunde@example.com', '123456', until, 'de');
    assert.equal(german.subject, 'Ihr Anmeldecode: 123456');
    assert.match(german.text, /^Ihr Code für die Anmeldung lautet 123456\.\n\nEr funktioniert einmal, bis 2026-11-29 10:15 UTC,/);
    assert.equal(emailCodeMail('a@example.com', '123456', until).subject, 'Your sign-in code: 123456');

    const reset = passwordResetMail('kunde@example.com', 'https://shop.example.com/reset?token=abc', until, 'de');
    assert.equal(reset.subject, 'Setzen Sie Ihr Passwort zurück');
    assert.match(reset.html, /<a href="https:\/\/shop\.example\.com\/reset\?token=abc">Neues Passwort wählen<\/a>/);
    assert.equal(verificationMail('kunde@example.com', 'https://shop.example.com/v', until, 'de').subject, 'Bestätigen Sie Ihre E-Mail-Adresse');
    assert.equal(verificationMail('a@example.com', 'https://shop.example.com/v', until).subject, 'Confirm your email address');
  });
});
