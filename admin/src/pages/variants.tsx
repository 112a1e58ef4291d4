import { useState } from 'preact/hooks';
import { api, formatMoney, type ApiError, type Page, type Variant } from '../api';
import { Field, ProblemMessage, asApiError } from '../components';

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
  price: String(variant.price),
  stock: String(variant.stock),
  attributes: Object.entries(variant.attributes).map(([key, value]) => `${key}=${value}`).join(', '),
});

/** Numbers go as numbers when they are; anything else is sent as typed, for the API to judge. */
const asNumber = (text: string) => (/^-?\d+$/.test(text.trim()) ? Number(text) : text);

function toBody(draft: Draft) {
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
  return { product_id: draft.product_id, sku: draft.sku, name: draft.name, price: asNumber(draft.price), stock: asNumber(draft.stock), attributes };
}

function VariantForm(props: { draft: Draft; onChange: (draft: Draft) => void; error?: ApiError | undefined; label: string }) {
  const set = (field: keyof Draft) => (value: string) => props.onChange({ ...props.draft, [field]: value });
  return (
    <>
      <Field label="Product id" name="product_id" value={props.draft.product_id} onInput={set('product_id')} error={props.error} required />
      <Field label="SKU" name="sku" value={props.draft.sku} onInput={set('sku')} error={props.error} required />
      <Field label="Name" name="name" value={props.draft.name} onInput={set('name')} error={props.error} required />
      <Field label="Price in cents" name="price" value={props.draft.price} onInput={set('price')} error={props.error} required />
      <Field label="Stock" name="stock" value={props.draft.stock} onInput={set('stock')} error={props.error} />
      <Field label="Attributes (key=value, comma-separated)" name="attributes" value={props.draft.attributes} onInput={set('attributes')} error={props.error} />
      <button type="submit">{props.label}</button>
    </>
  );
}

export function VariantsPage(props: { canWrite: boolean }) {
  const [sku, setSku] = useState('');
  const [productId, setProductId] = useState('');
  const [found, setFound] = useState<Variant[]>([]);
  const [searchError, setSearchError] = useState<ApiError>();
  const [draft, setDraft] = useState<Draft>(emptyDraft);
  const [createError, setCreateError] = useState<ApiError>();
  const [created, setCreated] = useState<string>();
  const [editing, setEditing] = useState<{ variant: Variant; etag: string | null; draft: Draft }>();
  const [editError, setEditError] = useState<ApiError>();

  const run = async (load: () => Promise<Variant[]>) => {
    try {
      setFound(await load());
      setSearchError(undefined);
    } catch (caught) {
      setFound([]);
      setSearchError(asApiError(caught));
    }
  };
  const findBySku = (event: Event) => {
    event.preventDefault();
    void run(async () => [(await api<Variant>('GET', `/api/variants/sku/${encodeURIComponent(sku)}`)).body]);
  };
  const listProduct = (event: Event) => {
    event.preventDefault();
    void run(async () => (await api<Page<Variant>>('GET', `/api/variants/product/${encodeURIComponent(productId)}?limit=100`)).body.items);
  };

  const create = async (event: Event) => {
    event.preventDefault();
    try {
      const reply = await api<Variant>('POST', `/api/variants/${crypto.randomUUID()}`, toBody(draft));
      setCreated(reply.body.sku);
      setCreateError(undefined);
      setDraft(emptyDraft);
      setFound([reply.body]);
    } catch (caught) {
      setCreateError(asApiError(caught));
      setCreated(undefined);
    }
  };

  const startEdit = async (variant: Variant) => {
    const reply = await api<Variant>('GET', `/api/variants/${variant.id}`);
    setEditing({ variant: reply.body, etag: reply.etag, draft: toDraft(reply.body) });
    setEditError(undefined);
  };
  const save = async (event: Event) => {
    event.preventDefault();
    if (!editing) return;
    try {
      const reply = await api<Variant>('PUT', `/api/variants/${editing.variant.id}`, toBody(editing.draft), editing.etag ? { 'if-match': editing.etag } : {});
      setFound(found.map((variant) => (variant.id === reply.body.id ? reply.body : variant)));
      setEditing(undefined);
      setEditError(undefined);
    } catch (caught) {
      setEditError(asApiError(caught));
    }
  };
  const remove = async (variant: Variant) => {
    if (!confirm(`Delete variant ${variant.sku}?`)) return;
    try {
      await api('DELETE', `/api/variants/${variant.id}`, undefined, { 'if-match': `"${variant.version}"` });
      setFound(found.filter((candidate) => candidate.id !== variant.id));
    } catch (caught) {
      setSearchError(asApiError(caught));
    }
  };

  return (
    <section aria-labelledby="variants-title">
      <h1 id="variants-title">Variants</h1>
      <div class="row">
        <form class="card" onSubmit={findBySku} role="search" aria-label="Find by SKU">
          <Field label="SKU" name="find-sku" value={sku} onInput={setSku} required />
          <button type="submit">Find by SKU</button>
        </form>
        <form class="card" onSubmit={listProduct} role="search" aria-label="List a product's variants">
          <Field label="Product id" name="find-product" value={productId} onInput={setProductId} required />
          <button type="submit">List variants</button>
        </form>
      </div>
      <ProblemMessage error={searchError} />
      {found.length > 0 && (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">SKU</th>
                <th scope="col">Name</th>
                <th scope="col">Product</th>
                <th scope="col">Price</th>
                <th scope="col">Stock</th>
                <th scope="col">Attributes</th>
                {props.canWrite && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {found.map((variant) => (
                <tr key={variant.id}>
                  <td>{variant.sku}</td>
                  <td>{variant.name}</td>
                  <td>{variant.product_id}</td>
                  <td class="number">{formatMoney(variant.price, variant.currency)}</td>
                  <td class="number">{variant.stock}</td>
                  <td>{Object.entries(variant.attributes).map(([key, value]) => `${key}: ${value}`).join(', ')}</td>
                  {props.canWrite && (
                    <td>
                      <button type="button" onClick={() => void startEdit(variant)}>
                        Edit {variant.sku}
                      </button>{' '}
                      <button type="button" class="danger" onClick={() => void remove(variant)}>
                        Delete {variant.sku}
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {editing && (
        <form class="card" onSubmit={save} aria-label="Edit variant">
          <h2>Edit {editing.variant.sku}</h2>
          <VariantForm draft={editing.draft} onChange={(next) => setEditing({ ...editing, draft: next })} error={editError} label="Save variant" />
          <ProblemMessage error={editError}>
            {editError?.problem.code === 'precondition_failed' && (
              <>
                Someone else changed this variant.{' '}
                <button type="button" onClick={() => void startEdit(editing.variant)}>
                  Reload it
                </button>
              </>
            )}
          </ProblemMessage>
        </form>
      )}
      {props.canWrite && (
        <form class="card" onSubmit={create} aria-label="Create variant">
          <h2>New variant</h2>
          <VariantForm draft={draft} onChange={setDraft} error={createError} label="Create variant" />
          <ProblemMessage error={createError} />
          {created && <p role="status">Created {created}.</p>}
        </form>
      )}
    </section>
  );
}
