import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, isSignedIn, signOut, whenSignedOut, type User } from './api';
import { LoginPage } from './pages/login';
import { ProfilePage } from './pages/profile';
import { UserDetailPage } from './pages/user-detail';
import { UsersPage } from './pages/users';
import { VariantsPage } from './pages/variants';
import './styles.css';

/** Hash routes (#/users, #/users/<id>, #/variants, #/profile), so the server serves one page. */
function useRoute(): string {
  const [route, setRoute] = useState(location.hash.slice(1) || '/');
  useEffect(() => {
    const update = () => setRoute(location.hash.slice(1) || '/');
    addEventListener('hashchange', update);
    return () => removeEventListener('hashchange', update);
  }, []);
  return route;
}

function App() {
  const [signedIn, setSignedIn] = useState(isSignedIn());
  const [me, setMe] = useState<User>();
  const route = useRoute();
  useEffect(() => whenSignedOut(() => setSignedIn(false)), []);
  useEffect(() => {
    if (signedIn) api<User>('GET', '/api/users/profile').then((reply) => setMe(reply.body)).catch(() => {});
    else setMe(undefined);
  }, [signedIn]);

  if (!signedIn) return <LoginPage onSignedIn={() => setSignedIn(true)} />;
  if (!me) return <p class="loading">Loading…</p>;
  const staff = me.role !== 'user';
  const userMatch = /^\/users\/([0-9a-f-]{36})$/.exec(route);
  const page = userMatch ? (
    <UserDetailPage id={userMatch[1]!} me={me} />
  ) : route === '/users' && staff ? (
    <UsersPage />
  ) : route === '/profile' || !staff ? (
    <ProfilePage me={me} onChanged={setMe} />
  ) : (
    <VariantsPage canWrite={staff} />
  );
  return (
    <>
      <header>
        <nav aria-label="Main">
          <strong class="brand">Shop admin</strong>
          {staff && <a href="#/variants">Variants</a>}
          {staff && <a href="#/users">Users</a>}
          <a href="#/profile">My profile</a>
          <span class="who">
            {me.name} ({me.role})
          </span>
          <button type="button" onClick={() => void signOut()}>
            Log out
          </button>
        </nav>
      </header>
      <main>{page}</main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
