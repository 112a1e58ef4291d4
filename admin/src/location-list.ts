import { useEffect, useState } from 'preact/hooks';
import { client, reply, type ApiError, type StockLocation } from './api';
import { asApiError } from './components';

/**
 * Every stock location (API.md section 21), by priority then code as the API orders them. The
 * list is short and not paged, so each screen that offers a choice of location reads it whole.
 */
export function useLocations() {
  const [locations, setLocations] = useState<StockLocation[]>();
  const [error, setError] = useState<ApiError>();
  const reload = async () => {
    try {
      setLocations((await reply(client.GET('/api/locations'))).body.items);
      setError(undefined);
    } catch (caught) {
      setError(asApiError(caught));
    }
  };
  useEffect(() => void reload(), []);
  return { locations, error, reload };
}

/** How a location is named in a choice: its code, and whether it takes no new stock or allocations. */
export const locationLabel = (location: { code: string; status: string }) => (location.status === 'inactive' ? `${location.code} (inactive)` : location.code);
