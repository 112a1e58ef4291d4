import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { client, passkeyOptions, reply, whenStepUpNeeded, type SecondFactorMethod } from './api';
import { SecondFactorForm } from './second-factor-form';

interface Pending {
  methods: SecondFactorMethod[];
  settle: (verified: boolean) => void;
}

/**
 * Answers the API's 403 `step_up_required`: the typed client (api.ts) holds the refused request
 * while this dialog asks for a second factor and verifies the session with it, then sends the
 * request again once. The page that made the request, and what was typed into it, stay as they
 * were; cancelling gives the page the refusal to show.
 */
export function StepUpHost() {
  const [pending, setPending] = useState<Pending>();
  useEffect(
    () =>
      whenStepUpNeeded(async () => {
        const { body } = await reply(client.GET('/api/auth/mfa'));
        const methods: SecondFactorMethod[] = [...new Set(body.factors.map((factor) => factor.type))];
        if (body.recovery_codes_left > 0) methods.push('recovery_code');
        return new Promise<boolean>((settle) => setPending({ methods, settle }));
      }),
    [],
  );
  if (!pending) return null;
  const finish = (verified: boolean) => {
    setPending(undefined);
    pending.settle(verified);
  };
  return <StepUpDialog methods={pending.methods} onVerified={() => finish(true)} onCancel={() => finish(false)} />;
}

function StepUpDialog(props: { methods: SecondFactorMethod[]; onVerified: () => void; onCancel: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  // Modal: above any confirmation that asked for the action, and focus goes back to it on close.
  // Opened before the form's own effect runs, so that effect's focus on the code field holds.
  useLayoutEffect(() => {
    dialog.current?.showModal();
    return () => dialog.current?.close();
  }, []);
  return (
    <dialog ref={dialog} aria-labelledby="step-up-title" onCancel={props.onCancel}>
      <h2 id="step-up-title">Confirm it is you</h2>
      <p>This action needs your second factor, verified in the last few minutes. It goes ahead as soon as you have.</p>
      <SecondFactorForm
        label="Confirm it is you"
        methods={props.methods}
        passkeyOptions={() => passkeyOptions()}
        submit={async (proof) => {
          await reply(client.POST('/api/auth/mfa/verify', { body: proof }));
          props.onVerified();
        }}
        submitLabel="Verify"
        onCancel={props.onCancel}
        cancelLabel="Cancel"
      />
    </dialog>
  );
}
