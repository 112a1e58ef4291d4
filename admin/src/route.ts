import { useEffect, useState } from 'preact/hooks';

export interface Route {
  path: string;
  query: URLSearchParams;
}

/** Hash routes (#/users, #/users/<id>, #/variants, #/events?subject_id=…), so the server serves one page. */
export function useRoute(): Route {
  const read = () => {
    const [path = '/', query = ''] = (location.hash.slice(1) || '/').split('?');
    return { path, query: new URLSearchParams(query) };
  };
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const update = () => setRoute(read());
    addEventListener('hashchange', update);
    return () => removeEventListener('hashchange', update);
  }, []);
  return route;
}
