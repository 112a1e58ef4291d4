import { useEffect, useRef, useState } from 'preact/hooks';
import { client, entityTag, reply, type ApiError, type Variant } from '../api';
import type { operations } from '../../../client/api-types';
import type { useConfirmation } from '../confirmation';
import { Field, ProblemMessage, ResultLine, asApiError, formatTime } from '../components';
import { AttributeRows, attributeRows, attributesOf, type AttributeRow } from '../attribute-rows';
import { DataTable } from '../data-table';
import { parseAmount, toMajorUnits } from '../money';
import { Pager, usePages } from '../pages-list';
import { StockSection } from './variant-stock';

export type PanelTarget = { kind: 'new' } | { kind: 'variant'; id: string };
type Ask = ReturnType<typeof useConfirmation>['ask'];

interface Draft {
  product_id: string;
  sku: string;
  name: string;
  price: string;
  stock: string;
  attributes: AttributeRow[];
}

const emptyDraft: Draft = { product_id: '', sku: '', name: '', price: '', stock: '0', attributes: [{ key: '', value: '' }] };

const toDraft = (variant: Variant): Draft => ({
  product_id: variant.product_id,
  sku: variant.sku,
  name: variant.name,
  price: toMajorUnits(variant.price, variant.currency),
  stock: String(variant.stock),
  attributes: attributeRows(variant.attributes),
});

type VariantBody = operations['createVariant']['requestBody']['content']['application/json'];
type VariantPatch = operations['patchVariant']['requestBody']['content']['application/json'];

/** What the console itself finds wrong in a draft before sending it, by field. */
interface LocalProblems {
  price?: string;
  attributes?: string;
}

/** The body the API takes, or the console's own messages for a price or attributes it cannot read. */
function toBody(draft: Draft, currency: string, withStock: boolean): { body: VariantBody } | { problems: LocalProblems } {
  const price = parseAmount(draft.price, currency);
  const attributes = attributesOf(draft.attributes);
  if (!price.ok || 'problem' in attributes) {
    return { problems: { ...(!price.ok ? { price: price.message } : {}), ...('problem' in attributes ? { attributes: attributes.problem } : {}) } };
  }
  const body: VariantBody = { product_id: draft.product_id, sku: draft.sku, name: draft.name, price: price.minorUnits, attributes: attributes.attributes };
  // Anything but digits goes as typed, for the API to judge and name the field (hence the cast).
  if (withStock) body.stock = /^\d+$/.test(draft.stock.trim()) ? Number(draft.stock) : (draft.stock as unknown as number);
  return { body };
}

/** A merge patch from a full body: an attribute the variant had and the rows no longer name is removed (null). */
function toPatch(body: VariantBody, before: Variant): VariantPatch {
  const removed = Object.keys(before.attributes).filter((key) => !Object.hasOwn(body.attributes ?? {}, key));
  return { ...body, attributes: { ...body.attributes, ...Object.fromEntries(removed.map((key) => [key, null])) } };
}

/** The body's fields the variant form shows beside their inputs. */
const VARIANT_FIELDS = ['product_id', 'sku', 'name', 'price', 'stock', 'attributes'];

function VariantFields(props: { draft: Draft; onChange: (draft: Draft) => void; error: ApiError | undefined; problems: LocalProblems; currency: string; withStock: boolean }) {
  const set = (field: Exclude<keyof Draft, 'attributes'>) => (value: string) => props.onChange({ ...props.draft, [field]: value });
  return (
    <>
      <Field label="Product id" name="product_id" value={props.draft.product_id} onInput={set('product_id')} error={props.error} required />
      <Field label="SKU" name="sku" value={props.draft.sku} onInput={set('sku')} error={props.error} required />
      <Field label="Name" name="name" value={props.draft.name} onInput={set('name')} error={props.error} required />
      <Field label={`Price in ${props.currency}`} name="price" value={props.draft.price} onInput={set('price')} error={props.error} message={props.problems.price} inputMode="decimal" required />
      {props.withStock && <Field label="Stock" name="stock" value={props.draft.stock} onInput={set('stock')} error={props.error} inputMode="numeric" />}
      <AttributeRows rows={props.draft.attributes} onChange={(attributes) => props.onChange({ ...props.draft, attributes })} error={props.error} message={props.problems.attributes} />
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
  // Escape closes the panel, and focus goes back to what opened it (the row's Open button, New variant).
  const opener = useRef(document.activeElement as HTMLElement | null);
  // After this render's changes are in: until then the list (holding the opener) may still be inert.
  useEffect(() => () => void setTimeout(() => opener.current?.isConnected && opener.current.focus()), []);
  return (
    <aside class="panel card" aria-labelledby="panel-title" onKeyDown={(event) => event.key === 'Escape' && props.onClose()}>
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
  // Focus moves into the panel once its title is shown (after the variant has loaded), so keyboard
  // and screen-reader users, and on narrow screens everyone, land on what they opened.
  useEffect(() => props.heading.current?.focus(), []);
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
  const [problems, setProblems] = useState<LocalProblems>({});
  const create = async (event: Event) => {
    event.preventDefault();
    const built = toBody(draft, props.currency, true);
    setProblems('problems' in built ? built.problems : {});
    // The API's earlier answer no longer describes what is typed: drop it rather than show it beside the new problem.
    setError(undefined);
    if ('problems' in built) return;
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
        <VariantFields draft={draft} onChange={setDraft} error={error} problems={problems} currency={props.currency} withStock />
        <ProblemMessage error={error} fields={VARIANT_FIELDS} />
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
  const [problems, setProblems] = useState<LocalProblems>({});
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
      setProblems({});
    } catch (caught) {
      setLoadError(asApiError(caught));
    }
  };
  useEffect(() => void load(), []);

  const save = async (event: Event) => {
    event.preventDefault();
    if (!variant) return;
    const built = toBody(draft, variant.currency, false);
    setProblems('problems' in built ? built.problems : {});
    setError(undefined);
    setSaved(undefined);
    if ('problems' in built) return;
    try {
      const params = { path: { id: variant.id }, header: { 'if-match': entityTag(variant) } };
      const { body: saved } = await reply(client.PATCH('/api/variants/{id}', { params, body: toPatch(built.body, variant) }));
      show(saved);
      setError(undefined);
      setSaved(`Saved ${saved.sku}.`);
    } catch (caught) {
      setError(asApiError(caught));
      setSaved(undefined);
    }
  };
  // Cancel puts back what is stored, and with it drops the problems found in the draft it throws away (#56).
  const cancel = () => {
    if (variant) setDraft(toDraft(variant));
    setError(undefined);
    setProblems({});
    setSaved(undefined);
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

  // Whatever happens to the load, the panel keeps its title and Close (on a narrow screen it covers the page).
  if (loadError || !variant) {
    return (
      <>
        <PanelTitle heading={props.heading} text={loadError ? 'Variant not shown' : 'Loading…'} onClose={props.onClose} />
        <ProblemMessage error={loadError} />
      </>
    );
  }
  return (
    <>
      <PanelTitle heading={props.heading} text={variant.sku} onClose={props.onClose} />
      {props.showHistory && (
        <p>
          <a href={`#/events?subject_id=${variant.id}`}>History of this variant</a>
        </p>
      )}
      <form onSubmit={save} aria-label="Edit variant">
        <VariantFields draft={draft} onChange={setDraft} error={error} problems={problems} currency={variant.currency} withStock={false} />
        <ProblemMessage error={error} fields={VARIANT_FIELDS}>
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
          <button type="button" class="secondary" onClick={cancel}>
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
            // Its page shows where each line holds its units, and moves them.
            { label: 'Reference', wraps: true, cell: (reservation) => <a href={`#/reservations?id=${reservation.id}`}>{reservation.reference ?? reservation.id}</a> },
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
