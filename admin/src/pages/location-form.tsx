import { useState } from 'preact/hooks';
import { client, entityTag, reply, type ApiError, type StockLocation } from '../api';
import { Field, ProblemMessage, asApiError } from '../components';

interface Draft {
  code: string;
  name: string;
  priority: string;
}

const FIELDS = ['code', 'name', 'priority'];

/** A priority as a number when it is one; anything else goes as typed for the API to judge and name (hence the cast). */
const priorityOf = (typed: string) => (/^\d+$/.test(typed.trim()) ? Number(typed) : (typed as unknown as number));

function LocationFields(props: { draft: Draft; onChange: (draft: Draft) => void; error: ApiError | undefined }) {
  const set = (field: keyof Draft) => (value: string) => props.onChange({ ...props.draft, [field]: value });
  return (
    <div class="row">
      <Field label="Code" name="code" value={props.draft.code} onInput={set('code')} error={props.error} autoComplete="off" required />
      <Field label="Name" name="name" value={props.draft.name} onInput={set('name')} error={props.error} required />
      <Field label="Priority (0 first, 1000 last)" name="priority" value={props.draft.priority} onInput={set('priority')} error={props.error} inputMode="numeric" />
    </div>
  );
}

/** A new location: its code and name, and where it comes in the order reservations are filled (priority 100 when left blank). */
export function NewLocation(props: { onCreated: (location: StockLocation) => void }) {
  const [draft, setDraft] = useState<Draft>({ code: '', name: '', priority: '' });
  const [error, setError] = useState<ApiError>();
  const create = async (event: Event) => {
    event.preventDefault();
    try {
      const body = { code: draft.code, name: draft.name, ...(draft.priority.trim() ? { priority: priorityOf(draft.priority) } : {}) };
      props.onCreated((await reply(client.POST('/api/locations', { body }))).body);
      setDraft({ code: '', name: '', priority: '' });
      setError(undefined);
    } catch (caught) {
      setError(asApiError(caught));
    }
  };
  return (
    <form class="card" onSubmit={create} aria-label="New location">
      <h2>New location</h2>
      <LocationFields draft={draft} onChange={setDraft} error={error} />
      <ProblemMessage error={error} fields={FIELDS} />
      <button type="submit">Create location</button>
    </form>
  );
}

/** A location's code, name and priority, saved with If-Match so another admin's change is not overwritten. */
export function EditLocation(props: { location: StockLocation; onSaved: (location: StockLocation) => void; onStale: (fresh: StockLocation) => void; onCancel: () => void }) {
  const { location } = props;
  const [draft, setDraft] = useState<Draft>({ code: location.code, name: location.name, priority: String(location.priority) });
  const [error, setError] = useState<ApiError>();
  const params = { path: { id: location.id }, header: { 'if-match': entityTag(location) } };
  const save = async (event: Event) => {
    event.preventDefault();
    try {
      const body = { code: draft.code, name: draft.name, priority: priorityOf(draft.priority) };
      props.onSaved((await reply(client.PATCH('/api/locations/{id}', { params, body }))).body);
    } catch (caught) {
      setError(asApiError(caught));
    }
  };
  const reload = async () => props.onStale((await reply(client.GET('/api/locations/{id}', { params: { path: { id: location.id } } }))).body);
  return (
    <form class="card" onSubmit={save} aria-label={`Edit location ${location.code}`}>
      <h2>Edit location {location.code}</h2>
      <LocationFields draft={draft} onChange={setDraft} error={error} />
      <ProblemMessage error={error} fields={FIELDS}>
        {error?.problem.code === 'precondition_failed' && (
          <>
            Someone else changed this location.{' '}
            <button type="button" class="secondary" onClick={() => void reload().catch((caught) => setError(asApiError(caught)))}>
              Reload it
            </button>
          </>
        )}
      </ProblemMessage>
      <div class="actions">
        <button type="button" class="secondary" onClick={props.onCancel}>
          Cancel
        </button>
        <button type="submit">Save location</button>
      </div>
    </form>
  );
}
