import { useEffect, useState } from 'preact/hooks';
import { client, reply, type ApiError, type Variant, type VariantStock } from '../api';
import { Field, ProblemMessage, ResultLine, asApiError, formatTime } from '../components';
import { DataTable } from '../data-table';
import { useIdempotencyKey } from '../idempotency';
import { locationLabel } from '../location-list';
import { ActorName } from '../names';
import { Pager, usePages } from '../pages-list';

type Mode = 'delta' | 'stock';

/** A variant's stock at every location, read again whenever the variant changes (a version, a stock or a reservation). */
function useVariantStock(variant: Variant) {
  const [levels, setLevels] = useState<VariantStock>();
  const [error, setError] = useState<ApiError>();
  const load = async () => {
    try {
      setLevels((await reply(client.GET('/api/variants/{id}/stock', { params: { path: { id: variant.id } } }))).body);
      setError(undefined);
    } catch (caught) {
      setError(asApiError(caught));
    }
  };
  useEffect(() => void load(), [variant.id, variant.version, variant.stock, variant.reserved]);
  return { levels, error };
}

/**
 * The variant's stock per location, a change at a chosen location (units added or taken, or a
 * count set as is, both with a reason), and the movements that make up the stock.
 */
export function StockSection(props: { variant: Variant; onChanged: (variant: Variant) => void }) {
  const { variant } = props;
  const { levels, error: levelsError } = useVariantStock(variant);
  const [locationId, setLocationId] = useState('');
  const [mode, setMode] = useState<Mode>('delta');
  const [amount, setAmount] = useState('');
  const [reason, setReason] = useState('');
  const [reference, setReference] = useState('');
  const [error, setError] = useState<ApiError>();
  const [done, setDone] = useState<string>();
  const idempotency = useIdempotencyKey();
  const movements = usePages(variant.id, (paging) => client.GET('/api/variants/{id}/stock/movements', { params: { path: { id: variant.id }, query: paging } }), {
    limit: 10,
    restartOn: `${variant.version} ${variant.stock}`,
  });
  const codeOf = (id: string) => levels?.locations.find((level) => level.location_id === id)?.code ?? id.slice(0, 8);
  // The first location in the list is not necessarily the default: the API's default applies when none is chosen.
  const chosen = levels?.locations.find((level) => level.location_id === locationId);

  const change = async (event: Event) => {
    event.preventDefault();
    const number = (mode === 'delta' ? /^-?\d+$/ : /^\d+$/).test(amount.trim()) ? Number(amount) : amount;
    try {
      // A number that is not a whole one goes as typed, for the API to judge and name the field (hence the cast).
      const common = { reason, ...(reference.trim() ? { reference } : {}), ...(locationId ? { location_id: locationId } : {}) };
      const body = mode === 'delta' ? { ...common, delta: number as number } : { ...common, stock: number as number };
      const { body: changed } = await reply(client.PUT('/api/variants/{id}/stock', { params: { path: { id: variant.id }, header: { 'idempotency-key': idempotency.keyFor(body) } }, body }));
      props.onChanged(changed);
      const where = chosen ? ` at ${chosen.code}` : '';
      const what = mode === 'delta' ? `Stock${where} ${typeof number === 'number' && number > 0 ? '+' : ''}${number}` : `Stock${where} set to ${number}`;
      setDone(`${what}: now ${changed.stock} in all (${changed.available} available).`);
      setError(undefined);
      setAmount('');
      setReason('');
      setReference('');
      idempotency.forget();
    } catch (caught) {
      setError(asApiError(caught));
      setDone(undefined);
    }
  };
  return (
    <section aria-labelledby="stock-title">
      <h3 id="stock-title">Stock</h3>
      <p>
        {variant.stock} on hand, {variant.reserved} reserved, {variant.available} available.
      </p>
      <ProblemMessage error={levelsError} />
      {levels && (
        <DataTable
          compact
          className="stock-levels"
          items={levels.locations.map((level) => ({ ...level, id: level.location_id }))}
          columns={[
            { label: 'Location', wraps: true, cell: (level) => locationLabel(level) },
            { label: 'Stock', numeric: true, cell: (level) => level.stock },
            { label: 'Reserved', numeric: true, cell: (level) => level.reserved },
            { label: 'Available', numeric: true, cell: (level) => level.available },
          ]}
        />
      )}
      <form onSubmit={change} aria-label="Change stock">
        <div class="field">
          <label for="stock-location">Location</label>
          <select id="stock-location" name="location_id" value={locationId} onChange={(event) => setLocationId((event.target as HTMLSelectElement).value)}>
            <option value="">The default location</option>
            {levels?.locations.map((level) => (
              <option key={level.location_id} value={level.location_id}>
                {locationLabel(level)}
              </option>
            ))}
          </select>
        </div>
        <fieldset class="choice">
          <legend>Change</legend>
          <label class="checkbox">
            <input type="radio" name="stock-mode" checked={mode === 'delta'} onChange={() => setMode('delta')} /> Add or remove units
          </label>
          <label class="checkbox">
            <input type="radio" name="stock-mode" checked={mode === 'stock'} onChange={() => setMode('stock')} /> Set the count
          </label>
        </fieldset>
        {mode === 'delta' ? (
          <Field label="Units to add (negative to remove)" name="delta" value={amount} onInput={setAmount} error={error} inputMode="numeric" required />
        ) : (
          <Field label="Units counted" name="stock" value={amount} onInput={setAmount} error={error} inputMode="numeric" required />
        )}
        <Field label="Reason" name="reason" value={reason} onInput={setReason} error={error} required />
        <Field label="Reference (optional)" name="reference" value={reference} onInput={setReference} error={error} />
        <ProblemMessage error={error} fields={['delta', 'stock', 'reason', 'reference']} />
        <ResultLine text={done} />
        <button type="submit">Change stock</button>
      </form>
      <h4>Movements</h4>
      <DataTable
        compact
        className="movements"
        items={movements.page?.items ?? []}
        columns={[
          { label: 'When', cell: (movement) => formatTime(movement.created_at) },
          { label: 'Where', cell: (movement) => codeOf(movement.location_id) },
          { label: 'Change', numeric: true, cell: (movement) => (movement.delta > 0 ? `+${movement.delta}` : movement.delta) },
          { label: 'Stock after', numeric: true, cell: (movement) => movement.stock_after },
          { label: 'Reason', cell: (movement) => <>{movement.reason}{movement.reference && <span class="reference"> ({movement.reference})</span>}</> },
          { label: 'Who', cell: (movement) => <ActorName id={movement.actor_id} /> },
        ]}
      />
      <Pager pages={movements} noun="movement" label="Movements" />
    </section>
  );
}
