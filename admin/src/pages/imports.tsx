import { useEffect, useRef, useState } from 'preact/hooks';
import { client, reply, type ApiError, type VariantImport } from '../api';
import { ProblemMessage, ResultLine, Select, asApiError, formatTime } from '../components';
import { DataTable } from '../data-table';
import { saveDownload } from '../download';
import { Pager, usePages } from '../pages-list';

const MODES = ['upsert', 'create'] as const;
const ERROR_POLICIES = ['reject_all', 'skip_failed'] as const;
/** The choices in words (#56): the API's values are for programs. */
const MODE_LABELS: Record<(typeof MODES)[number], string> = { upsert: 'create new SKUs, update known ones', create: 'create only (a known SKU fails)' };
const ERROR_POLICY_LABELS: Record<(typeof ERROR_POLICIES)[number], string> = { reject_all: 'import nothing', skip_failed: 'skip that row, import the rest' };
/** How often a running import is read again for its progress. */
const POLL_MS = 1000;

const finished = (entry: VariantImport) => entry.status !== 'pending' && entry.status !== 'running';

/**
 * Catalogue files in (API.md section 14): upload a CSV or JSON-lines file with its mode, error
 * policy and dry run; follow the import as it runs (rows_processed against rows_total), read its
 * counts and first errors, download the error report, cancel it; and the history of imports.
 */
export function ImportsPage() {
  const [shown, setShown] = useState<VariantImport>();
  const history = usePages('imports', (paging) => client.GET('/api/variants/imports', { params: { query: paging } }), { restartOn: shown?.status });
  return (
    <section aria-labelledby="imports-title">
      <h1 id="imports-title">Imports</h1>
      <UploadForm onStarted={setShown} />
      {shown && <ImportProgress key={shown.id} entry={shown} onChanged={setShown} />}
      <h2 id="import-history-title">History</h2>
      <Pager pages={history} noun="import" label="Imports" />
      <DataTable
        compact
        items={history.page?.items ?? []}
        columns={[
          { label: 'Started', cell: (entry) => formatTime(entry.created_at) },
          { label: 'Status', cell: (entry) => entry.status + (entry.dry_run ? ' (dry run)' : '') },
          { label: 'Rows', numeric: true, cell: (entry) => entry.rows_total ?? entry.rows_processed },
          { label: 'Created', numeric: true, cell: (entry) => entry.created },
          { label: 'Updated', numeric: true, cell: (entry) => entry.updated },
          { label: 'Failed', numeric: true, cell: (entry) => entry.failed },
          {
            label: 'Actions',
            cell: (entry) => (
              <button type="button" class="secondary" onClick={() => setShown(entry)}>
                Show import of {formatTime(entry.created_at)}
              </button>
            ),
          },
        ]}
      />
    </section>
  );
}

function UploadForm(props: { onStarted: (entry: VariantImport) => void }) {
  const [file, setFile] = useState<File>();
  const [mode, setMode] = useState<string>('upsert');
  const [onError, setOnError] = useState<string>('reject_all');
  const [dryRun, setDryRun] = useState(false);
  const [error, setError] = useState<ApiError>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    if (!file || busy) return;
    setBusy(true);
    try {
      // The format is the file's: JSON lines by their usual extensions, CSV otherwise.
      const jsonLines = /\.(jsonl|ndjson)$/i.test(file.name);
      const { body } = await reply(
        client.POST('/api/variants/imports', {
          params: { query: { mode: mode as (typeof MODES)[number], on_error: onError as (typeof ERROR_POLICIES)[number], dry_run: dryRun } },
          body: await file.text(),
          bodySerializer: (text: string) => text,
          headers: { 'content-type': jsonLines ? 'application/x-ndjson' : 'text/csv; charset=utf-8' },
        }),
      );
      setError(undefined);
      props.onStarted(body);
    } catch (caught) {
      setError(asApiError(caught));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="card" onSubmit={submit} aria-label="Import a file">
      <h2>Import a file</h2>
      <p class="hint">
        A CSV file with a header line (sku, id, product_id, name, price, stock, attributes.&lt;key&gt;) or JSON lines (.jsonl) with the same keys; an export
        imports back unchanged.
      </p>
      <label class="field">
        File
        <input type="file" name="file" accept=".csv,.jsonl,.ndjson,text/csv,application/x-ndjson" required onChange={(event) => setFile((event.target as HTMLInputElement).files?.[0])} />
      </label>
      {/* The options side by side with room between them, each label above its choice, wrapping on narrow screens. */}
      <div class="filters import-options">
        <Select label="Mode" name="mode" value={mode} options={MODES} optionLabels={MODE_LABELS} onChange={setMode} />
        <Select label="When a row fails" name="on_error" value={onError} options={ERROR_POLICIES} optionLabels={ERROR_POLICY_LABELS} onChange={setOnError} />
        <label class="checkbox">
          <input type="checkbox" name="dry_run" checked={dryRun} onChange={(event) => setDryRun((event.target as HTMLInputElement).checked)} /> Dry run (store nothing)
        </label>
      </div>
      <ProblemMessage error={error} />
      <button type="submit" disabled={busy}>
        Start import
      </button>
    </form>
  );
}

/** One import, read again every second until it ends. */
function ImportProgress(props: { entry: VariantImport; onChanged: (entry: VariantImport) => void }) {
  const { entry } = props;
  const [error, setError] = useState<ApiError>();
  const [saved, setSaved] = useState<string>();
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  // Read again every second until it ends; a failed read is shown and the next one still comes.
  // A reply that lands after this import stopped being the one shown (or changed) is dropped.
  const [attempt, setAttempt] = useState(0);
  useEffect(() => {
    if (finished(entry)) return;
    let live = true;
    const timer = setTimeout(async () => {
      try {
        const { body } = await reply(client.GET('/api/variants/imports/{id}', { params: { path: { id: entry.id } } }));
        if (!live) return;
        setError(undefined);
        props.onChanged(body);
      } catch (caught) {
        if (!live) return;
        setError(asApiError(caught));
        setAttempt((count) => count + 1);
      }
    }, POLL_MS);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [entry, attempt]);
  const cancel = async () => {
    try {
      props.onChanged((await reply(client.POST('/api/variants/imports/{id}/cancel', { params: { path: { id: entry.id } } }))).body);
    } catch (caught) {
      setError(asApiError(caught));
    }
  };
  const downloadErrors = async () => {
    try {
      setSaved(`Saved ${await saveDownload(client.GET('/api/variants/imports/{id}/errors', { params: { path: { id: entry.id } }, parseAs: 'stream' }), `import-${entry.id}-errors.${entry.format}`)}.`);
    } catch (caught) {
      setError(asApiError(caught));
    }
  };
  return (
    <section class="card" aria-labelledby="import-title">
      <h2 id="import-title" ref={heading} tabIndex={-1}>
        Import of {formatTime(entry.created_at)}: {entry.status}
        {entry.dry_run ? ' (dry run)' : ''}
      </h2>
      <label class="field">
        Rows processed: {entry.rows_processed} of {entry.rows_total ?? 'not yet counted'}
        <progress max={entry.rows_total ?? undefined} value={entry.rows_total === null ? undefined : entry.rows_processed} />
      </label>
      <p role="status">
        {entry.created} created, {entry.updated} updated, {entry.unchanged} unchanged, {entry.failed} failed ({MODE_LABELS[entry.mode]}; when a row fails: {ERROR_POLICY_LABELS[entry.on_error]})
      </p>
      {entry.first_errors.length > 0 && (
        <>
          <h3>First errors</h3>
          <ul>
            {entry.first_errors.map((row) => (
              <li key={`${row.line} ${row.message}`}>
                Line {row.line}: {row.message}
              </li>
            ))}
          </ul>
        </>
      )}
      <div class="actions">
        {entry.failed > 0 && (
          <button type="button" class="secondary" onClick={() => void downloadErrors()}>
            Download error report
          </button>
        )}
        {!finished(entry) && (
          <button type="button" class="danger" onClick={() => void cancel()}>
            Cancel import
          </button>
        )}
      </div>
      <ResultLine text={saved} />
      <ProblemMessage error={error} />
    </section>
  );
}
