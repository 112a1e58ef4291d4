import { useState } from 'preact/hooks';
import { client, entityTag, reply, type ApiError, type Variant } from '../api';
import type { operations } from '../../../client/api-types';
import { useConfirmation } from '../confirmation';
import { Field, ProblemMessage, ResultLine, asApiError } from '../components';
import { saveDownload } from '../download';
import { DataTable } from '../data-table';
import { useMediaQuery } from '../media-query';
import { formatMoney, parseAmount } from '../money';
import { Pager, plural, usePages } from '../pages-list';
import { VariantPanel, type PanelTarget } from './variant-panel';

type BatchOperation = operations['batchVariants']['requestBody']['content']['application/json']['operations'][number];
type VariantFilters = Pick<NonNullable<operations['listVariants']['parameters']['query']>, 'q' | 'product_id' | 'in_stock'>;

/** The fields a PUT replaces, from a variant as it is, for batch updates that change one of them. */
const putFields = (variant: Variant): Extract<BatchOperation, { op: 'update' }>['variant'] => ({
  product_id: variant.product_id,
  sku: variant.sku,
  name: variant.name,
  price: variant.price,
  stock: variant.stock,
  attributes: variant.attributes,
});

/** `showHistory`: links to the audit log, which only admins can read. */
export function VariantsPage(props: { currency: string; showHistory: boolean }) {
  const [q, setQ] = useState('');
  const [productId, setProductId] = useState('');
  const [inStock, setInStock] = useState(false);
  const [filters, setFilters] = useState<VariantFilters>({});
  const pages = usePages(JSON.stringify(filters), (paging) => client.GET('/api/variants', { params: { query: { ...filters, ...paging } } }));
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [panel, setPanel] = useState<PanelTarget>();
  const confirmation = useConfirmation();
  const panelCoversList = useMediaQuery('(max-width: 900px)');

  const search = (event: Event) => {
    event.preventDefault();
    const next: VariantFilters = { ...(q.trim() ? { q: q.trim() } : {}), ...(productId.trim() ? { product_id: productId.trim() } : {}), ...(inStock ? { in_stock: true } : {}) };
    setSelected(new Set());
    if (JSON.stringify(next) === JSON.stringify(filters)) pages.restart();
    else setFilters(next);
  };

  const items = pages.page?.items ?? [];
  const chosen = items.filter((variant) => selected.has(variant.id));
  const toggle = (id: string) => {
    const next = new Set(selected);
    if (!next.delete(id)) next.add(id);
    setSelected(next);
  };
  const replaceRow = (variant: Variant) => pages.replace((rows) => rows.map((row) => (row.id === variant.id ? variant : row)));

  return (
    <section aria-labelledby="variants-title" class={panel ? 'with-panel' : undefined}>
      {/* A modal dialog is in the top layer, out of the grid; outside the list, which may be inert. */}
      {confirmation.dialog}
      {/* Below 900px the panel is a sheet over the list (styles.css): the list is out of reach, for keyboards and screen readers too. */}
      <div class="list-column" inert={panel !== undefined && panelCoversList}>
        <div class="title-row">
          <h1 id="variants-title">Variants</h1>
          <button type="button" onClick={() => setPanel({ kind: 'new' })}>
            New variant
          </button>
        </div>
        {confirmation.result}
        <form class="filters" onSubmit={search} role="search" aria-label="Find variants">
          <label>
            SKU or name <input name="q" type="search" value={q} onInput={(event) => setQ((event.target as HTMLInputElement).value)} />
          </label>
          <label>
            Product id <input name="product_id" value={productId} onInput={(event) => setProductId((event.target as HTMLInputElement).value)} />
          </label>
          <label class="checkbox">
            <input type="checkbox" checked={inStock} onChange={(event) => setInStock((event.target as HTMLInputElement).checked)} /> Available only
          </label>
          <button type="submit">Search</button>
        </form>
        <ExportButtons filters={filters} />
        {chosen.length > 0 && (
          <BatchBar
            chosen={chosen}
            currency={props.currency}
            ask={confirmation.ask}
            onDone={() => {
              setSelected(new Set());
              void pages.reload();
            }}
          />
        )}
        <DataTable
          className="variants"
          items={items}
          rowClass={(variant) => (panel?.kind === 'variant' && panel.id === variant.id ? 'current' : undefined)}
          columns={[
            {
              label: 'Select',
              header: (
                <input
                  type="checkbox"
                  aria-label="Select every variant on this page"
                  checked={items.length > 0 && chosen.length === items.length}
                  onChange={(event) => setSelected(new Set((event.target as HTMLInputElement).checked ? items.map((variant) => variant.id) : []))}
                />
              ),
              cell: (variant) => <input type="checkbox" aria-label={`Select ${variant.sku}`} checked={selected.has(variant.id)} onChange={() => toggle(variant.id)} />,
            },
            { label: 'SKU', wraps: true, cell: (variant) => variant.sku },
            { label: 'Name', cell: (variant) => variant.name },
            // With the panel open the list has half the width: the product and the stock's parts, which the panel shows, make room for the name (#56).
            ...(panel ? [] : [{ label: 'Product', cell: (variant: Variant) => variant.product_id }]),
            { label: 'Price', numeric: true, cell: (variant) => formatMoney(variant.price, variant.currency) },
            ...(panel
              ? []
              : [
                  { label: 'Stock', numeric: true, cell: (variant: Variant) => variant.stock },
                  { label: 'Reserved', numeric: true, cell: (variant: Variant) => variant.reserved },
                ]),
            { label: 'Available', numeric: true, cell: (variant) => variant.available },
            {
              label: 'Actions',
              cell: (variant) => (
                <button type="button" class="secondary" aria-label={`Open ${variant.sku}`} onClick={() => setPanel({ kind: 'variant', id: variant.id })}>
                  Open
                </button>
              ),
            },
          ]}
        />
        {pages.page && items.length === 0 && <p>No variant matches.</p>}
        <Pager pages={pages} noun="variant" label="Variants" />
      </div>
      {panel && (
        <VariantPanel
          key={panel.kind === 'variant' ? panel.id : 'new'}
          target={panel}
          currency={props.currency}
          showHistory={props.showHistory}
          ask={confirmation.ask}
          onClose={() => setPanel(undefined)}
          onCreated={(variant) => {
            confirmation.announce(`Created ${variant.sku}.`);
            setPanel({ kind: 'variant', id: variant.id });
            void pages.restart();
          }}
          onChanged={replaceRow}
          onDeleted={(variant) => {
            setPanel(undefined);
            confirmation.announce(`Deleted ${variant.sku}.`);
            void pages.reload();
          }}
        />
      )}
    </section>
  );
}

type Ask = ReturnType<typeof useConfirmation>['ask'];

/** Actions on the selected rows, sent as one all-or-nothing batch, each row guarded by its ETag. */
function BatchBar(props: { chosen: Variant[]; currency: string; ask: Ask; onDone: () => void }) {
  const [price, setPrice] = useState('');
  const [problem, setProblem] = useState<string>();
  const count = plural(props.chosen.length, 'variant');
  const skus = <p class="skus">{props.chosen.map((variant) => variant.sku).join(', ')}</p>;
  const runBatch = async (operations: BatchOperation[]) => {
    await reply(client.POST('/api/variants/batch', { body: { operations } }));
    props.onDone();
  };

  const changePrice = (event: Event) => {
    event.preventDefault();
    const parsed = parseAmount(price, props.currency);
    if (!parsed.ok) return setProblem(parsed.message);
    setProblem(undefined);
    const shown = formatMoney(parsed.minorUnits, props.currency);
    props.ask({
      title: `Set the price of ${count} to ${shown}`,
      message: skus,
      confirmLabel: `Set ${count} to ${shown}`,
      reason: 'none',
      run: async () => {
        await runBatch(props.chosen.map((variant) => ({ op: 'update' as const, id: variant.id, if_match: entityTag(variant), variant: { ...putFields(variant), price: parsed.minorUnits } })));
        setPrice('');
        return `Set the price of ${count} to ${shown}.`;
      },
    });
  };
  const remove = () =>
    props.ask({
      title: `Delete ${count}`,
      message: skus,
      confirmLabel: `Delete ${count}`,
      danger: true,
      reason: 'none',
      run: async () => {
        await runBatch(props.chosen.map((variant) => ({ op: 'delete' as const, id: variant.id, if_match: entityTag(variant) })));
        return `Deleted ${count}.`;
      },
    });

  return (
    <div class="card batch" role="region" aria-label="Selected variants">
      <strong>{count} selected</strong>
      <form class="inline" onSubmit={changePrice} aria-label="Change price of selected">
        <Field label={`New price in ${props.currency}`} name="batch-price" value={price} onInput={setPrice} message={problem} inputMode="decimal" required />
        <button type="submit">Change price…</button>
      </form>
      <button type="button" class="danger" onClick={remove}>
        Delete selected…
      </button>
    </div>
  );
}

/** The variants the current search finds, as a file (CSV or JSON lines) that imports back unchanged. */
function ExportButtons(props: { filters: VariantFilters }) {
  const [error, setError] = useState<ApiError>();
  const [saved, setSaved] = useState<string>();
  const download = async (format: 'csv' | 'jsonl') => {
    try {
      setSaved(`Saved ${await saveDownload(client.GET('/api/variants/export', { params: { query: { format, ...props.filters } }, parseAs: 'stream' }), `variants.${format}`)}.`);
      setError(undefined);
    } catch (caught) {
      setError(asApiError(caught));
    }
  };
  return (
    <div class="actions" role="group" aria-label="Export the variants found">
      <button type="button" class="secondary" onClick={() => void download('csv')}>
        Export CSV
      </button>
      <button type="button" class="secondary" onClick={() => void download('jsonl')}>
        Export JSON lines
      </button>
      <ResultLine text={saved} />
      <ProblemMessage error={error} />
    </div>
  );
}
