import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ApiError } from './api';
import { Field, ProblemMessage, ResultLine, asApiError } from './components';

/** An action that changes something a staff member could regret: asked, then told. */
export interface Confirmation {
  title: string;
  message: ComponentChildren;
  confirmLabel: string;
  danger?: boolean;
  /** Whether a reason is asked for; it goes into the change's audit event. */
  reason: 'required' | 'optional' | 'none';
  /** For what cannot be undone: the text (an email, say) to type before the button works. */
  typeToConfirm?: string;
  /** Runs the change; what it returns is shown as the result. */
  run: (reason: string) => Promise<string>;
}

function ConfirmDialog(props: { confirmation: Confirmation; onDone: (result: string) => void; onCancel: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [reason, setReason] = useState('');
  const [typed, setTyped] = useState('');
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  const { confirmation } = props;
  // A modal dialog keeps focus inside, closes on Escape and gives focus back to the opener.
  useEffect(() => {
    dialog.current?.showModal();
    return () => dialog.current?.close();
  }, []);

  const submit = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    setBusy(true);
    try {
      props.onDone(await confirmation.run(reason.trim()));
    } catch (caught) {
      setError(asApiError(caught));
      setBusy(false);
    }
  };
  return (
    <dialog ref={dialog} aria-labelledby="confirm-title" onCancel={props.onCancel}>
      <form onSubmit={submit} aria-label={confirmation.title}>
        <h2 id="confirm-title">{confirmation.title}</h2>
        <div class="confirm-message">{confirmation.message}</div>
        {confirmation.reason !== 'none' && (
          <Field
            label={confirmation.reason === 'required' ? 'Reason' : 'Reason (optional)'}
            name="reason"
            value={reason}
            onInput={setReason}
            error={error}
            required={confirmation.reason === 'required'}
          />
        )}
        {confirmation.typeToConfirm !== undefined && (
          <Field label={`Type ${confirmation.typeToConfirm} to confirm`} name="type-to-confirm" value={typed} onInput={setTyped} autoComplete="off" required />
        )}
        <ProblemMessage error={error} fields={confirmation.reason !== 'none' ? ['reason'] : []} />
        <div class="actions">
          <button type="button" class="secondary" onClick={props.onCancel}>
            Cancel
          </button>
          <button type="submit" class={confirmation.danger ? 'danger' : undefined} disabled={busy || (confirmation.typeToConfirm !== undefined && typed.trim() !== confirmation.typeToConfirm)}>
            {confirmation.confirmLabel}
          </button>
        </div>
      </form>
    </dialog>
  );
}

/**
 * One confirmation at a time for a page: `ask` opens it, `dialog` renders it and `result`
 * announces what the last confirmed action did.
 */
export function useConfirmation() {
  const [pending, setPending] = useState<Confirmation>();
  const [result, setResult] = useState<string>();
  const ask = (confirmation: Confirmation) => {
    setResult(undefined);
    setPending(confirmation);
  };
  const dialog = pending && (
    <ConfirmDialog
      confirmation={pending}
      onCancel={() => setPending(undefined)}
      onDone={(text) => {
        setPending(undefined);
        setResult(text);
      }}
    />
  );
  return { ask, dialog, result: <ResultLine text={result} />, announce: setResult };
}
