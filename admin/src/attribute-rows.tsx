import { useState } from 'preact/hooks';
import type { ApiError } from './api';

let fieldsetCounter = 0;

/** One attribute as typed: a row with a name and a value, so a value may hold commas and equals signs. */
export interface AttributeRow {
  key: string;
  value: string;
}

export const attributeRows = (attributes: Record<string, string>): AttributeRow[] => Object.entries(attributes).map(([key, value]) => ({ key, value }));

/**
 * The attributes the rows name, or the console's own message when a row cannot be read: a value
 * with no name, or a name twice (a JSON object cannot say it twice). Empty rows are ignored;
 * lengths and counts are the API's to judge, beside the fieldset.
 */
export function attributesOf(rows: AttributeRow[]): { attributes: Record<string, string> } | { problem: string } {
  const attributes: Record<string, string> = {};
  for (const row of rows) {
    const key = row.key.trim();
    if (!key && !row.value.trim()) continue;
    if (!key) return { problem: `The value "${row.value.trim()}" needs a name.` };
    if (Object.hasOwn(attributes, key)) return { problem: `"${key}" is named twice.` };
    attributes[key] = row.value.trim();
  }
  return { attributes };
}

/** The attributes as rows of name and value inputs, with add and remove buttons. */
export function AttributeRows(props: { rows: AttributeRow[]; onChange: (rows: AttributeRow[]) => void; error: ApiError | undefined; message: string | undefined }) {
  const [errorId] = useState(() => `attributes-error-${(fieldsetCounter += 1)}`);
  const message = props.message ?? props.error?.fieldMessage('attributes');
  const change = (index: number, field: keyof AttributeRow, value: string) => props.onChange(props.rows.map((row, at) => (at === index ? { ...row, [field]: value } : row)));
  return (
    <fieldset class="attributes" aria-invalid={message ? 'true' : undefined} aria-describedby={message ? errorId : undefined}>
      <legend>Attributes</legend>
      {props.rows.map((row, index) => (
        <div class="attribute-row" key={index}>
          <input aria-label={`Attribute ${index + 1}`} placeholder="e.g. size" value={row.key} onInput={(event) => change(index, 'key', (event.target as HTMLInputElement).value)} />
          <input aria-label={`Value of attribute ${index + 1}`} placeholder="e.g. M" value={row.value} onInput={(event) => change(index, 'value', (event.target as HTMLInputElement).value)} />
          <button type="button" class="secondary" aria-label={`Remove attribute ${index + 1}`} onClick={() => props.onChange(props.rows.filter((_, at) => at !== index))}>
            Remove
          </button>
        </div>
      ))}
      <button type="button" class="secondary" onClick={() => props.onChange([...props.rows, { key: '', value: '' }])}>
        Add attribute
      </button>
      {message && (
        <span class="field-error" id={errorId} role="alert">
          {message}
        </span>
      )}
    </fieldset>
  );
}
