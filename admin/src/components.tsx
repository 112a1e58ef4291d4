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

/**
 * The API's problem, shown beside the action that caused it: its detail, and each entry of its
 * `errors[]` that no field shows. `fields` names the form's Fields, which show their own.
 */
export function ProblemMessage(props: { error: ApiError | undefined; fields?: readonly string[]; children?: ComponentChildren }) {
  if (!props.error) return null;
  const shownByFields = new Set(props.fields ?? []);
  const unshown = (props.error.problem.errors ?? []).filter((error) => !shownByFields.has(error.path.split('/')[1] ?? ''));
  return (
    <div class="problem" role="alert">
      <p>
        {props.error.problem.detail} <span class="code">({props.error.problem.code})</span> {props.children}
      </p>
      {unshown.length > 0 && (
        <ul>
          {unshown.map((error) => (
            <li key={`${error.path} ${error.message}`}>
              {error.path ? <code>{error.path}</code> : null} {error.message}
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
}) {
  return (
    <label>
      <span class={props.hideLabel ? 'visually-hidden' : undefined}>{props.label}</span>
      <select name={props.name} value={props.value} onChange={(event) => props.onChange((event.target as HTMLSelectElement).value)}>
        {props.anyLabel !== undefined && <option value="">{props.anyLabel}</option>}
        {props.options.map((option) => (
          <option key={option} value={option}>
            {option}
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
