import { useState } from 'preact/hooks';
import { client, entityTag, reply, type StockLocation } from '../api';
import { ProblemMessage } from '../components';
import { useConfirmation } from '../confirmation';
import { DataTable } from '../data-table';
import { useLocations } from '../location-list';
import { EditLocation, NewLocation } from './location-form';

type Patch = { status: 'active' | 'inactive' } | { is_default: true };

/**
 * The places that hold stock (API.md section 21), in the order reservations take from them.
 * Managers read the list; only admins create and change locations, so only they see the forms.
 */
export function LocationsPage(props: { canChange: boolean }) {
  const { locations, error, reload } = useLocations();
  const confirmation = useConfirmation();
  const [editing, setEditing] = useState<StockLocation>();

  const patch = (location: StockLocation, body: Patch) =>
    reply(client.PATCH('/api/locations/{id}', { params: { path: { id: location.id }, header: { 'if-match': entityTag(location) } }, body }));
  const makeDefault = (location: StockLocation) =>
    confirmation.ask({
      title: `Make ${location.code} the default location`,
      message: <p>Stock changes that name no location apply here from now on; the current default keeps its stock.</p>,
      confirmLabel: 'Make default',
      reason: 'none',
      run: async () => {
        await patch(location, { is_default: true });
        await reload();
        return `${location.code} is now the default location.`;
      },
    });
  const toggle = (location: StockLocation) => {
    const deactivating = location.status === 'active';
    confirmation.ask({
      title: `${deactivating ? 'Deactivate' : 'Activate'} ${location.code}`,
      message: (
        <p>
          {deactivating
            ? 'It keeps its stock and allocations, but reservations and transfers no longer send units there, and its units no longer count as available.'
            : 'Reservations and transfers may send units there again, and its units count as available.'}
        </p>
      ),
      confirmLabel: deactivating ? 'Deactivate' : 'Activate',
      danger: deactivating,
      reason: 'none',
      run: async () => {
        await patch(location, { status: deactivating ? 'inactive' : 'active' });
        await reload();
        return `${location.code} is ${deactivating ? 'inactive' : 'active'}.`;
      },
    });
  };
  const remove = (location: StockLocation) =>
    confirmation.ask({
      title: `Delete ${location.code}`,
      message: <p>Only a location that holds no stock and no allocation can be deleted.</p>,
      confirmLabel: 'Delete location',
      danger: true,
      reason: 'none',
      run: async () => {
        await reply(client.DELETE('/api/locations/{id}', { params: { path: { id: location.id }, header: { 'if-match': entityTag(location) } } }));
        await reload();
        return `Deleted ${location.code}.`;
      },
    });

  const actions = (location: StockLocation) => (
    <div class="actions">
      <button type="button" class="secondary" aria-label={`Edit ${location.code}`} onClick={() => setEditing(location)}>
        Edit
      </button>
      {!location.is_default && (
        <>
          <button type="button" class="secondary" aria-label={`Make default: ${location.code}…`} onClick={() => makeDefault(location)} disabled={location.status === 'inactive'}>
            Make default…
          </button>
          <button type="button" class="secondary" aria-label={`${location.status === 'active' ? 'Deactivate' : 'Activate'} ${location.code}…`} onClick={() => toggle(location)}>
            {location.status === 'active' ? 'Deactivate…' : 'Activate…'}
          </button>
          <button type="button" class="danger" aria-label={`Delete ${location.code}…`} onClick={() => remove(location)}>
            Delete…
          </button>
        </>
      )}
    </div>
  );

  return (
    <section aria-labelledby="locations-title">
      <h1 id="locations-title">Locations</h1>
      <p class="hint">
        Reservations take units from the active locations in this order: lowest priority first, then by code. Stock changes that name no location apply to the
        default.{props.canChange ? '' : ' Only admins change locations.'}
      </p>
      {confirmation.result}
      {confirmation.dialog}
      {props.canChange &&
        (editing ? (
          <EditLocation
            key={`${editing.id} ${editing.version}`}
            location={editing}
            onCancel={() => setEditing(undefined)}
            onStale={(fresh) => {
              setEditing(fresh);
              void reload();
            }}
            onSaved={(saved) => {
              setEditing(undefined);
              confirmation.announce(`Saved ${saved.code}.`);
              void reload();
            }}
          />
        ) : (
          <NewLocation
            onCreated={(created) => {
              confirmation.announce(`Created ${created.code}.`);
              void reload();
            }}
          />
        ))}
      <ProblemMessage error={error} />
      <DataTable
        className="locations"
        items={locations ?? []}
        columns={[
          { label: 'Code', wraps: true, cell: (location) => location.code },
          { label: 'Name', cell: (location) => location.name },
          { label: 'Priority', numeric: true, cell: (location) => location.priority },
          { label: 'Status', cell: (location) => <span class={location.status === 'active' ? 'badge ok' : 'badge'}>{location.status}</span> },
          { label: 'Default', cell: (location) => (location.is_default ? 'default' : '—') },
          ...(props.canChange ? [{ label: 'Actions', cell: actions }] : []),
        ]}
      />
    </section>
  );
}
