import { useState } from 'preact/hooks';
import { ApiError, client, reply, type VariantStock } from '../api';
import { AlertLine, Field, ProblemMessage, ResultLine, asApiError } from '../components';
import { DataTable } from '../data-table';
import { useIdempotencyKey } from '../idempotency';
import { locationLabel, useLocations } from '../location-list';

interface Line {
  sku: string;
  quantity: string;
}

/** A line moved, and where its variant's stock stands afterwards at both ends. */
interface Moved {
  id: string;
  fromCode: string;
  toCode: string;
  sku: string;
  quantity: number;
  from: number;
  to: number;
}

const emptyLine = (): Line => ({ sku: '', quantity: '' });

/** The variant a line names by SKU, or the console's own message when none has it. */
async function variantIdOf(sku: string): Promise<string | { problem: string }> {
  try {
    return (await reply(client.GET('/api/variants/sku/{sku}', { params: { path: { sku: sku.trim() } } }))).body.id;
  } catch (caught) {
    if (caught instanceof ApiError && caught.problem.status === 404) return { problem: `No variant has the SKU "${sku.trim()}".` };
    throw caught;
  }
}

/**
 * Units of one or more variants moved from one location to another (API.md section 21): all
 * lines or none, never below what the source holds reserved. Lines name variants by SKU, as
 * staff read them off a shelf; the console finds their ids before sending.
 */
export function StockTransfersPage() {
  const { locations, error: locationsError } = useLocations();
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [lines, setLines] = useState<Line[]>([emptyLine()]);
  const [reason, setReason] = useState('');
  const [reference, setReference] = useState('');
  const [error, setError] = useState<ApiError>();
  const [lineProblem, setLineProblem] = useState<string>();
  const [moved, setMoved] = useState<Moved[]>();
  const [done, setDone] = useState<string>();
  const idempotency = useIdempotencyKey();
  const changeLine = (index: number, field: keyof Line, value: string) => setLines(lines.map((line, at) => (at === index ? { ...line, [field]: value } : line)));

  const transfer = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    setLineProblem(undefined);
    setDone(undefined);
    try {
      const ids = await Promise.all(lines.map((line) => variantIdOf(line.sku)));
      const unknown = ids.find((id): id is { problem: string } => typeof id !== 'string');
      if (unknown) return setLineProblem(unknown.problem);
      const body = {
        from_location_id: from,
        to_location_id: to,
        // A quantity that is not a whole number goes as typed, for the API to judge and name the line (hence the cast).
        lines: lines.map((line, index) => ({ variant_id: ids[index] as string, quantity: (/^\d+$/.test(line.quantity.trim()) ? Number(line.quantity) : line.quantity) as number })),
        reason,
        ...(reference.trim() ? { reference } : {}),
      };
      const { body: result } = await reply(client.POST('/api/stock-transfers', { params: { header: { 'idempotency-key': idempotency.keyFor(body) } }, body }));
      const levels = await Promise.all(result.items.map((variant) => reply(client.GET('/api/variants/{id}/stock', { params: { path: { id: variant.id } } }))));
      const at = (stock: VariantStock, locationId: string) => stock.locations.find((level) => level.location_id === locationId)?.stock ?? 0;
      const codeOf = (id: string) => locations?.find((location) => location.id === id)?.code ?? id;
      const ends = { fromCode: codeOf(from), toCode: codeOf(to) };
      setMoved(result.items.map((variant, index) => ({ ...ends, id: variant.id, sku: variant.sku, quantity: body.lines[index]!.quantity, from: at(levels[index]!.body, from), to: at(levels[index]!.body, to) })));
      setDone(`Moved ${result.items.length === 1 ? '1 line' : `${result.items.length} lines`} from ${ends.fromCode} to ${ends.toCode}.`);
      setLines([emptyLine()]);
      setReason('');
      setReference('');
      idempotency.forget();
    } catch (caught) {
      setError(asApiError(caught));
    }
  };

  const choice = (label: string, name: string, value: string, onChange: (value: string) => void, activeOnly: boolean) => (
    <div class="field">
      <label for={`transfer-${name}`}>{label}</label>
      <select id={`transfer-${name}`} name={name} value={value} required onChange={(event) => onChange((event.target as HTMLSelectElement).value)}>
        <option value="">Choose a location</option>
        {locations
          ?.filter((location) => !activeOnly || location.status === 'active')
          .map((location) => (
            <option key={location.id} value={location.id}>
              {locationLabel(location)}: {location.name}
            </option>
          ))}
      </select>
    </div>
  );
  return (
    <section aria-labelledby="transfers-title">
      <h1 id="transfers-title">Stock transfers</h1>
      <p class="hint">Every line moves, or none; a location never gives away units it holds for reservations. An inactive location can send units but not receive them.</p>
      <ProblemMessage error={locationsError} />
      <form class="card" onSubmit={transfer} aria-label="Transfer stock">
        <div class="row">
          {choice('From', 'from_location_id', from, setFrom, false)}
          {/* An inactive location takes no stock by transfer (409 location_inactive): it is not offered. */}
          {choice('To', 'to_location_id', to, setTo, true)}
        </div>
        <fieldset class="attributes">
          <legend>Lines</legend>
          {lines.map((line, index) => (
            <div class="attribute-row" key={index}>
              <input aria-label={`SKU of line ${index + 1}`} placeholder="SKU" value={line.sku} required onInput={(event) => changeLine(index, 'sku', (event.target as HTMLInputElement).value)} />
              <input
                aria-label={`Units of line ${index + 1}`}
                placeholder="Units"
                inputMode="numeric"
                value={line.quantity}
                required
                onInput={(event) => changeLine(index, 'quantity', (event.target as HTMLInputElement).value)}
              />
              <button type="button" class="secondary" aria-label={`Remove line ${index + 1}`} disabled={lines.length === 1} onClick={() => setLines(lines.filter((_, at) => at !== index))}>
                Remove
              </button>
            </div>
          ))}
          <button type="button" class="secondary" onClick={() => setLines([...lines, emptyLine()])}>
            Add line
          </button>
        </fieldset>
        <AlertLine text={lineProblem} />
        <Field label="Reason" name="reason" value={reason} onInput={setReason} error={error} required />
        <Field label="Reference (optional)" name="reference" value={reference} onInput={setReference} error={error} />
        <ProblemMessage error={error} fields={['reason', 'reference']} />
        <ResultLine text={done} />
        <button type="submit">Transfer stock</button>
      </form>
      {moved && (
        <section aria-labelledby="moved-title">
          <h2 id="moved-title">Moved</h2>
          {/* The ends as they were when the transfer went, whatever the form shows now. */}
          <DataTable
            compact
            items={moved}
            columns={[
              { label: 'SKU', wraps: true, cell: (line) => line.sku },
              { label: 'Units', numeric: true, cell: (line) => line.quantity },
              { label: `Now at ${moved[0]?.fromCode}`, numeric: true, cell: (line) => line.from },
              { label: `Now at ${moved[0]?.toCode}`, numeric: true, cell: (line) => line.to },
            ]}
          />
        </section>
      )}
    </section>
  );
}
