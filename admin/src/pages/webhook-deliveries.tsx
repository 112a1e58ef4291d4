import { useState } from 'preact/hooks';
import { ApiError, client, reply, type Delivery, type Webhook } from '../api';
import { ProblemMessage, ResultLine, asApiError, formatTime } from '../components';
import { DataTable } from '../data-table';
import { Pager, usePages } from '../pages-list';

/** One webhook's deliveries, newest first, each of them sent again on request; `shown` changes to reload it (after a ping). */
export function Deliveries(props: { webhook: Webhook; shown: number }) {
  const { webhook } = props;
  const pages = usePages(webhook.id, (paging) => client.GET('/api/webhooks/{id}/deliveries', { params: { path: { id: webhook.id }, query: paging } }), { restartOn: props.shown });
  const [error, setError] = useState<ApiError>();
  const [done, setDone] = useState<string>();
  const retry = async (delivery: Delivery) => {
    setError(undefined);
    setDone(undefined);
    try {
      await reply(client.POST('/api/webhooks/{id}/deliveries/{delivery_id}/retry', { params: { path: { id: webhook.id, delivery_id: delivery.id } } }));
      setDone(`The ${delivery.event_type} delivery is being sent again.`);
      pages.restart();
    } catch (caught) {
      setError(asApiError(caught));
    }
  };
  return (
    <section aria-labelledby="deliveries-title" class="card">
      <h2 id="deliveries-title">
        Deliveries to <span class="sku">{webhook.url}</span>
      </h2>
      <ProblemMessage error={error} />
      <ResultLine text={done} />
      <DataTable
        compact
        items={pages.page?.items ?? []}
        columns={[
          { label: 'Event', cell: (delivery) => delivery.event_type },
          { label: 'Status', cell: (delivery) => delivery.status },
          { label: 'Attempts', numeric: true, cell: (delivery) => delivery.attempts },
          { label: 'Last answer', cell: (delivery) => delivery.last_error ?? delivery.last_status_code ?? '—' },
          { label: 'Next attempt', cell: (delivery) => formatTime(delivery.next_attempt_at) },
          { label: 'Created', cell: (delivery) => formatTime(delivery.created_at) },
          {
            label: 'Actions',
            cell: (delivery) => (
              <button type="button" class="secondary" aria-label={`Send the ${delivery.event_type} delivery again`} onClick={() => void retry(delivery)}>
                Send again
              </button>
            ),
          },
        ]}
      />
      {pages.page?.items.length === 0 && <p>No deliveries yet.</p>}
      <Pager pages={pages} noun="delivery" nouns="deliveries" label="Deliveries" />
    </section>
  );
}
