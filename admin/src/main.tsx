import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { client, isSignedIn, reply, signOut, whenSignedOut, type User } from './api';
import { displayName } from './components';
import { forgetNames } from './names';
import { AccountLinkPage } from './pages/account-links';
import { ApiClientsPage } from './pages/api-clients';
import { EventsPage } from './pages/events';
import { IdentityProvidersPage } from './pages/identity-providers';
import { ImportsPage } from './pages/imports';
import { LocationsPage } from './pages/locations';
import { LoginPage } from './pages/login';
import { ProfilePage } from './pages/profile';
import { ReservationsPage } from './pages/reservations';
import { StaffOnlyPage } from './pages/staff-only';
import { StockTransfersPage } from './pages/stock-transfers';
import { UserDetailPage } from './pages/user-detail';
import { UsersPage } from './pages/users';
import { VariantsPage } from './pages/variants';
import { WebhooksPage } from './pages/webhooks';
import { StepUpHost } from './step-up';
import { useRoute } from './route';
import './styles.css';


function Screen() {
  const [signedIn, setSignedIn] = useState(isSignedIn());
  const [me, setMe] = useState<User>();
  const route = useRoute();
  useEffect(
    () =>
      whenSignedOut(() => {
        forgetNames();
        setSignedIn(false);
      }),
    [],
  );
  useEffect(() => {
    if (signedIn) reply(client.GET('/api/users/profile')).then(({ body }) => setMe(body)).catch(() => {});
    else setMe(undefined);
  }, [signedIn]);

  // The links in emails open these without a session.
  if (route.path === '/reset-password' || route.path === '/verify-email') {
    return <AccountLinkPage kind={route.path === '/reset-password' ? 'reset' : 'verify'} token={route.query.get('token') ?? ''} />;
  }
  if (!signedIn) return <LoginPage onSignedIn={() => setSignedIn(true)} />;
  if (!me) return <p class="loading">Loading…</p>;
  if (me.role === 'user') return <StaffOnlyPage me={me} />;
  const isAdmin = me.role === 'admin';
  const userMatch = /^\/users\/([^/]+)$/.exec(route.path);
  // The section of the page shown, for the navigation's marker: a user's page is under Users, and what is unknown shows Variants.
  const adminOnly: [string, string][] = [
    ['/events', 'Audit log'],
    ['/webhooks', 'Webhooks'],
    ['/clients', 'API clients'],
    ['/identity-providers', 'Identity providers'],
  ];
  // API.md section 21: every member of staff reads locations, moves stock and reallocates reservations.
  const stockSections: [string, string][] = [
    ['/locations', 'Locations'],
    ['/transfers', 'Transfers'],
    ['/reservations', 'Reservations'],
  ];
  // The navigation's sections, in order: path and label.
  const sections: [string, string][] = [['/variants', 'Variants'], ...stockSections, ['/imports', 'Imports'], ['/users', 'Users'], ...(isAdmin ? adminOnly : []), ['/profile', 'My profile']];
  const shown = userMatch ? '/users' : (sections.find(([path]) => path === route.path)?.[0] ?? '/variants');
  const page = userMatch ? (
    <UserDetailPage key={userMatch[1]} id={userMatch[1]!} me={me} />
  ) : route.path === '/locations' ? (
    <LocationsPage canChange={isAdmin} />
  ) : route.path === '/transfers' ? (
    <StockTransfersPage />
  ) : route.path === '/reservations' ? (
    <ReservationsPage openId={route.query.get('id') ?? undefined} />
  ) : route.path === '/imports' ? (
    <ImportsPage />
  ) : route.path === '/users' ? (
    <UsersPage />
  ) : route.path === '/events' && isAdmin ? (
    <EventsPage key={route.query.toString()} initial={route.query} currency={me.currency} />
  ) : route.path === '/webhooks' && isAdmin ? (
    <WebhooksPage />
  ) : route.path === '/clients' && isAdmin ? (
    <ApiClientsPage />
  ) : route.path === '/identity-providers' && isAdmin ? (
    <IdentityProvidersPage />
  ) : route.path === '/profile' ? (
    <ProfilePage me={me} onChanged={setMe} />
  ) : (
    <VariantsPage currency={me.currency} showHistory={isAdmin} />
  );
  return (
    <>
      {/* Hash routes own the fragment, so the skip link moves focus itself. */}
      <a
        class="skip-link"
        href="#/"
        onClick={(event) => {
          event.preventDefault();
          document.getElementById('main')?.focus();
        }}
      >
        Skip to content
      </a>
      <header>
        <nav aria-label="Main">
          <strong class="brand">Shop admin</strong>
          {sections.map(([path, label]) => (
            <NavLink key={path} path={path} current={shown}>
              {label}
            </NavLink>
          ))}
          <span class="who">
            {displayName(me)} ({me.role})
          </span>
          <button type="button" onClick={() => void signOut()}>
            Log out
          </button>
        </nav>
      </header>
      <main id="main" tabIndex={-1}>
        {page}
      </main>
    </>
  );
}

/** A link of the main navigation, marked (aria-current) while its section is shown. */
function NavLink(props: { path: string; current: string; children: string }) {
  return (
    <a href={`#${props.path}`} aria-current={props.path === props.current ? 'page' : undefined}>
      {props.children}
    </a>
  );
}

/** The screen, and the step-up dialog any sensitive action may open above it. */
function App() {
  return (
    <>
      <Screen />
      <StepUpHost />
    </>
  );
}

render(<App />, document.getElementById('app')!);
