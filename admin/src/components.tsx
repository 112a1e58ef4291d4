import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError, NetworkError } from './api';

let fieldCounter = 0;

/** A labelled input whose API error, if any, is announced next to it. */
export function Field(props: {
  label: string;
  name: string;
  value: string;
  onInput: (value: string) => void;
  error?: ApiError | undefined;
  /** A message of the console's own, about what was typed (before any request). */
  message?: string | undefined;
  type?: string;
  required?: boolean;
  autoComplete?: string;
  inputMode?: 'decimal' | 'numeric' | 'text';
}) {
  const [id] = useState(() => `field-${props.name}-${(fieldCounter += 1)}`);
  const message = props.message ?? props.error?.fieldMessage(props.name);
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <input
        id={id}
        name={props.name}
        type={props.type ?? 'text'}
        value={props.value}
        required={props.required}
        autoComplete={props.autoComplete}
        inputMode={props.inputMode}
        aria-invalid={message ? 'true' : undefined}
        aria-describedby={message ? `${id}-error` : undefined}
        onInput={(event) => props.onInput((event.target as HTMLInputElement).value)}
      />
      {message && (
        <span class="field-error" id={`${id}-error`} role="alert">
          {message}
        </span>
      )}
    </div>
  );
}

/** Where in the request an error is, in words: `/lines/0/quantity` → "lines, item 1, quantity". */
const placeInWords = (path: string) =>
  path
    .split('/')
    .filter(Boolean)
    .map((part) => (/^\d+$/.test(part) ? `item ${Number(part) + 1}` : part.replaceAll('_', ' ')))
    .join(', ');

/**
 * The API's problem, shown beside the action that caused it, for staff: its detail (the service's
 * "does not match the schema" said as what to do; no code in parentheses), and each entry of its
 * `errors[]` that no field shows. `fields` names the form's Fields, which show their own; a detail
 * that only repeats what a field already says is not said twice.
 */
export function ProblemMessage(props: { error: ApiError | undefined; fields?: readonly string[]; children?: ComponentChildren }) {
  if (!props.error) return null;
  const { problem } = props.error;
  const shownByFields = new Set(props.fields ?? []);
  const errors = problem.errors ?? [];
  const unshown = errors.filter((error) => !shownByFields.has(error.path.split('/')[1] ?? ''));
  const repeatsAField = unshown.length === 0 && errors.some((error) => problem.detail?.includes(error.message));
  if (repeatsAField && !props.children) return null;
  const detail =
    problem.code === 'validation_failed'
      ? unshown.length > 0
        ? 'Some of what was typed cannot be used:'
        : 'Correct the fields marked above.'
      : problem.detail;
  return (
    <div class="problem" role="alert">
      <p>
        {repeatsAField ? null : detail} {props.children}
      </p>
      {unshown.length > 0 && (
        <ul>
          {unshown.map((error) => (
            <li key={`${error.path} ${error.message}`}>
              {error.path ? `${placeInWords(error.path)}: ` : null}
              {error.message}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/**
 * Any failure as a problem to show: the API's own, a request that got no reply (the typed
 * client's NetworkError), or a fault in the console itself, named as such rather than blamed on the network.
 */
export function asApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof NetworkError) {
    return new ApiError({ type: 'about:blank', title: 'Unreachable', status: 0, code: 'unavailable', detail: 'The service could not be reached.' });
  }
  console.error(error);
  const detail = `The console failed: ${error instanceof Error ? error.message : String(error)}. Reload the page and try again.`;
  return new ApiError({ type: 'about:blank', title: 'Console error', status: 0, code: 'internal', detail });
}

/** A labelled choice among fixed values; `anyLabel` adds an empty first option (no filter). */
export function Select(props: {
  label: string;
  name: string;
  value: string;
  options: readonly string[];
  onChange: (value: string) => void;
  anyLabel?: string;
  hideLabel?: boolean;
  /** Each value in words, where the API's value (`reject_all`) is not what staff should read. */
  optionLabels?: Readonly<Record<string, string>>;
}) {
  return (
    <label>
      <span class={props.hideLabel ? 'visually-hidden' : undefined}>{props.label}</span>
      <select name={props.name} value={props.value} onChange={(event) => props.onChange((event.target as HTMLSelectElement).value)}>
        {props.anyLabel !== undefined && <option value="">{props.anyLabel}</option>}
        {props.options.map((option) => (
          <option key={option} value={option}>
            {props.optionLabels?.[option] ?? option}
          </option>
        ))}
      </select>
    </label>
  );
}

export { ROLES, STATUSES } from './api';

/** A user's name, or the email when the name is blank, so that a link to them is never empty. */
export const displayName = (user: { name: string; email: string }) => (user.name.trim() ? user.name : user.email);

export const formatTime = (time: string | null) => (time ? new Date(time).toLocaleString() : '—');

/** The outcome of the last action; the live region stays in place so screen readers announce it. */
export function ResultLine(props: { text: string | undefined }) {
  return (
    <p role="status" class={props.text ? 'notice' : 'visually-hidden'}>
      {props.text ?? ''}
    </p>
  );
}

/** A problem of the console's own (no API problem behind it), said at once where it happened. */
export function AlertLine(props: { text: string | undefined }) {
  if (!props.text) return null;
  return (
    <p class="problem" role="alert">
      {props.text}
    </p>
  );
}
