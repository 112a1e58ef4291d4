import { useEffect, useRef, useState } from 'preact/hooks';
import { client, entityTag, reply, type ApiError, type Variant } from '../api';
import type { operations } from '../../../client/api-types';
import type { useConfirmation } from '../confirmation';
import { Field, ProblemMessage, ResultLine, asApiError, formatTime } from '../components';
import { DataTable } from '../data-table';
import { parseAmount, toMajorUnits } from '../money';
import { Pager, usePages } from '../pages-list';

export type PanelTarget = { kind: 'new' } | { kind: 'variant'; id: string };
type Ask = ReturnType<typeof useConfirmation>['ask'];

interface Draft {
  product_id: string;
  sku: string;
  name: string;
  price: string;
  stock: string;
  attributes: string;
}

const emptyDraft: Draft = { product_id: '', sku: '', name: '', price: '', stock: '0', attributes: '' };

const toDraft = (variant: Variant): Draft => ({
  product_id: variant.product_id,
  sku: variant.sku,
  name: variant.name,
  price: toMajorUnits(variant.price, variant.currency),
  stock: String(variant.stock),
  attributes: Object.entries(variant.attributes).map(([key, value]) => `${key}=${value}`).join(', '),
});

/** The body the API takes, or the console's own message for a price it cannot read. */
type VariantBody = operations['createVariant']['requestBody']['content']['application/json'];

function toBody(draft: Draft, currency: string, withStock: boolean): { body: VariantBody } | { priceProblem: string } {
  const price = parseAmount(draft.price, currency);
  if (!price.ok) return { priceProblem: price.message };
  const attributes = Object.fromEntries(
    draft.attributes
      .split(',')
      .map((pair) => pair.trim())
      .filter(Boolean)
      .map((pair) => {
        const [key = '', ...value] = pair.split('=');
        return [key.trim(), value.join('=').trim()];
      }),
  );
  const body: VariantBody = { product_id: draft.product_id, sku: draft.sku, name: draft.name, price: price.minorUnits, attributes };
  // Anything but digits goes as typed, for the API to judge and name the field (hence the cast).
  if (withStock) body.stock = /^\d+$/.test(draft.stock.trim()) ? Number(draft.stock) : (draft.stock as unknown as number);
  return { body };
}

function VariantFields(props: { draft: Draft; onChange: (draft: Draft) => void; error: ApiError | undefined; priceProblem: string | undefined; currency: string; withStock: boolean }) {
  const set = (field: keyof Draft) => (value: string) => props.onChange({ ...props.draft, [field]: value });
  return (
    <>
      <Field label="Product id" name="product_id" value={props.draft.product_id} onInput={set('product_id')} error={props.error} required />
      <Field label="SKU" name="sku" value={props.draft.sku} onInput={set('sku')} error={props.error} required />
      <Field label="Name" name="name" value={props.draft.name} onInput={set('name')} error={props.error} required />
      <Field label={`Price in ${props.currency}`} name="price" value={props.draft.price} onInput={set('price')} error={props.error} message={props.priceProblem} inputMode="decimal" required />
      {props.withStock && <Field label="Stock" name="stock" value={props.draft.stock} onInput={set('stock')} error={props.error} inputMode="numeric" />}
      <Field label="Attributes (key=value, comma-separated)" name="attributes" value={props.draft.attributes} onInput={set('attributes')} error={props.error} />
    </>
  );
}

/** A side panel beside the list: a new variant, or one variant with its stock and reservations. */
export function VariantPanel(props: {
  target: PanelTarget;
  currency: string;
  showHistory: boolean;
  ask: Ask;
  onClose: () => void;
  onCreated: (variant: Variant) => void;
  onChanged: (variant: Variant) => void;
  onDeleted: (variant: Variant) => void;
}) {
  const heading = useRef<HTMLHeadingElement>(null);
  // Focus moves into the panel when it opens, so keyboard users land on what they opened.
  useEffect(() => heading.current?.focus(), []);
  return (
    <aside class="panel card" aria-labelledby="panel-title">
      {props.target.kind === 'new' ? (
        <NewVariant {...props} heading={heading} />
      ) : (
        <ExistingVariant {...props} id={props.target.id} heading={heading} />
      )}
    </aside>
  );
}

type PanelProps = Parameters<typeof VariantPanel>[0] & { heading: { current: HTMLHeadingElement | null } };

function PanelTitle(props: { heading: PanelProps['heading']; text: string; onClose: () => void }) {
  return (
    <div class="title-row">
      <h2 id="panel-title" tabIndex={-1} ref={props.heading} class="sku">
        {props.text}
      </h2>
      <button type="button" class="secondary" onClick={props.onClose}>
        Close
      </button>
    </div>
  );
}

function NewVariant(props: PanelProps) {
  const [draft, setDraft] = useState<Draft>(emptyDraft);
  const [error, setError] = useState<ApiError>();
  const [priceProblem, setPriceProblem] = useState<string>();
  const create = async (event: Event) => {
    event.preventDefault();
    const built = toBody(draft, props.currency, true);
    setPriceProblem('priceProblem' in built ? built.priceProblem : undefined);
    if ('priceProblem' in built) return;
    try {
      props.onCreated((await reply(client.POST('/api/variants', { body: built.body }))).body);
    } catch (caught) {
      setError(asApiError(caught));
    }
  };
  return (
    <>
      <PanelTitle heading={props.heading} text="New variant" onClose={props.onClose} />
      <form onSubmit={create} aria-label="Create variant">
        <VariantFields draft={draft} onChange={setDraft} error={error} priceProblem={priceProblem} currency={props.currency} withStock />
        <ProblemMessage error={error} />
        <div class="actions">
          <button type="button" class="secondary" onClick={props.onClose}>
            Cancel
          </button>
          <button type="submit">Create variant</button>
        </div>
      </form>
    </>
  );
}

function ExistingVariant(props: PanelProps & { id: string }) {
  const [variant, setVariant] = useState<Variant>();
  const [draft, setDraft] = useState<Draft>(emptyDraft);
  const [error, setError] = useState<ApiError>();
  const [loadError, setLoadError] = useState<ApiError>();
  const [priceProblem, setPriceProblem] = useState<string>();
  const [saved, setSaved] = useState<string>();

  const show = (fresh: Variant) => {
    setVariant(fresh);
    setDraft(toDraft(fresh));
    props.onChanged(fresh);
  };
  const load = async () => {
    try {
      show((await reply(client.GET('/api/variants/{id}', { params: { path: { id: props.id } } }))).body);
      setError(undefined);
      setPriceProblem(undefined);
    } catch (caught) {
      setLoadError(asApiError(caught));
    }
  };
  useEffect(() => void load(), []);

  const save = async (event: Event) => {
    event.preventDefault();
    if (!variant) return;
    const built = toBody(draft, variant.currency, false);
    setPriceProblem('priceProblem' in built ? built.priceProblem : undefined);
    if ('priceProblem' in built) return;
    try {
      const { body: saved } = await reply(client.PATCH('/api/variants/{id}', { params: { path: { id: variant.id }, header: { 'if-match': entityTag(variant) } }, body: built.body }));
      show(saved);
      setError(undefined);
      setSaved(`Saved ${saved.sku}.`);
    } catch (caught) {
      setError(asApiError(caught));
      setSaved(undefined);
    }
  };
  const remove = () =>
    variant &&
    props.ask({
      title: `Delete ${variant.sku}`,
      message: <p>The variant is gone for good; its SKU can be used again.</p>,
      confirmLabel: 'Delete variant',
      danger: true,
      reason: 'none',
      run: async () => {
        await reply(client.DELETE('/api/variants/{id}', { params: { path: { id: variant.id }, header: { 'if-match': entityTag(variant) } } }));
        props.onDeleted(variant);
        return `Deleted ${variant.sku}.`;
      },
    });

  if (loadError) return <ProblemMessage error={loadError} />;
  if (!variant) return <p class="loading">Loading…</p>;
  return (
    <>
      <PanelTitle heading={props.heading} text={variant.sku} onClose={props.onClose} />
      {props.showHistory && (
        <p>
          <a href={`#/events?subject_id=${variant.id}`}>History of this variant</a>
        </p>
      )}
      <form onSubmit={save} aria-label="Edit variant">
        <VariantFields draft={draft} onChange={setDraft} error={error} priceProblem={priceProblem} currency={variant.currency} withStock={false} />
        <ProblemMessage error={error}>
          {error?.problem.code === 'precondition_failed' && (
            <>
              Someone else changed this variant.{' '}
              <button type="button" class="secondary" onClick={() => void load()}>
                Reload it
              </button>
            </>
          )}
        </ProblemMessage>
        <ResultLine text={saved} />
        <div class="actions">
          <button type="button" class="secondary" onClick={() => setDraft(toDraft(variant))}>
            Cancel
          </button>
          <button type="submit">Save variant</button>
          <button type="button" class="danger" onClick={remove}>
            Delete…
          </button>
        </div>
      </form>
      <StockSection variant={variant} onChanged={show} />
      <ReservationsSection variant={variant} />
    </>
  );
}

/** A stock adjustment with its reason, and the movements that make up the stock. */
function StockSection(props: { variant: Variant; onChanged: (variant: Variant) => void }) {
  const { variant } = props;
  const [delta, setDelta] = useState('');
  const [reason, setReason] = useState('');
  const [reference, setReference] = useState('');
  const [error, setError] = useState<ApiError>();
  const [done, setDone] = useState<string>();
  const [idempotencyKey, setIdempotencyKey] = useState(() => crypto.randomUUID());
  const movements = usePages(variant.id, (paging) => client.GET('/api/variants/{id}/stock/movements', { params: { path: { id: variant.id }, query: paging } }), {
    limit: 10,
    restartOn: variant.version,
  });

  const adjust = async (event: Event) => {
    event.preventDefault();
    const amount = /^-?\d+$/.test(delta.trim()) ? Number(delta) : delta;
    try {
      // A delta that is not a whole number goes as typed, for the API to judge and name the field (hence the cast).
      const body = { delta: amount as number, reason, ...(reference.trim() ? { reference } : {}) };
      const { body: changed } = await reply(client.PUT('/api/variants/{id}/stock', { params: { path: { id: variant.id }, header: { 'idempotency-key': idempotencyKey } }, body }));
      props.onChanged(changed);
      setDone(`Stock ${typeof amount === 'number' && amount > 0 ? '+' : ''}${amount}: now ${changed.stock} (${changed.available} available).`);
      setError(undefined);
      setDelta('');
      setReason('');
      setReference('');
      setIdempotencyKey(crypto.randomUUID());
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
      <form onSubmit={adjust} aria-label="Adjust stock">
        <Field label="Units to add (negative to remove)" name="delta" value={delta} onInput={setDelta} error={error} inputMode="numeric" required />
        <Field label="Reason" name="reason" value={reason} onInput={setReason} error={error} required />
        <Field label="Reference (optional)" name="reference" value={reference} onInput={setReference} error={error} />
        <ProblemMessage error={error} />
        <ResultLine text={done} />
        <button type="submit">Adjust stock</button>
      </form>
      <h4>Movements</h4>
      <DataTable
        compact
        items={movements.page?.items ?? []}
        columns={[
          { label: 'When', cell: (movement) => formatTime(movement.created_at) },
          { label: 'Change', numeric: true, cell: (movement) => (movement.delta > 0 ? `+${movement.delta}` : movement.delta) },
          { label: 'Stock after', numeric: true, cell: (movement) => movement.stock_after },
          { label: 'Reason', cell: (movement) => <>{movement.reason}{movement.reference && <span class="reference"> ({movement.reference})</span>}</> },
        ]}
      />
      <Pager pages={movements} noun="movement" label="Movements" />
    </section>
  );
}

function ReservationsSection(props: { variant: Variant }) {
  const { variant } = props;
  const reservations = usePages(variant.id, (paging) => client.GET('/api/variants/{id}/reservations', { params: { path: { id: variant.id }, query: paging } }), {
    limit: 10,
    restartOn: variant.version,
  });
  return (
    <section aria-labelledby="reservations-title">
      <h3 id="reservations-title">Active reservations</h3>
      {reservations.page?.items.length === 0 && <p>None: no units are held.</p>}
      {reservations.page && reservations.page.items.length > 0 && (
        <DataTable
          compact
          items={reservations.page.items}
          columns={[
            { label: 'Reference', cell: (reservation) => reservation.reference ?? reservation.id },
            { label: 'Units', numeric: true, cell: (reservation) => reservation.lines.find((line) => line.variant_id === variant.id)?.quantity },
            { label: 'Created', cell: (reservation) => formatTime(reservation.created_at) },
            { label: 'Expires', cell: (reservation) => formatTime(reservation.expires_at) },
          ]}
        />
      )}
      <Pager pages={reservations} noun="reservation" label="Reservations" />
    </section>
  );
}
