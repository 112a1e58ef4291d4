import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { ApiError } from './api';

let fieldCounter = 0;

/** A labelled input whose API error, if any, is announced next to it. */
export function Field(props: {
  label: string;
  name: string;
  value: string;
  onInput: (value: string) => void;
  error?: ApiError | undefined;
  type?: string;
  required?: boolean;
  autoComplete?: string;
}) {
  const [id] = useState(() => `field-${props.name}-${(fieldCounter += 1)}`);
  const message = props.error?.fieldMessage(props.name);
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

/** The API's problem detail, shown beside the action that caused it. */
export function ProblemMessage(props: { error: ApiError | undefined; children?: ComponentChildren }) {
  if (!props.error) return null;
  return (
    <p class="problem" role="alert">
      {props.error.problem.detail} <span class="code">({props.error.problem.code})</span> {props.children}
    </p>
  );
}

export function asApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  return new ApiError({ status: 0, code: 'network', detail: 'The service could not be reached.' });
}
