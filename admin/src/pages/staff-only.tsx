import { signOut, type User } from '../api';
import { displayName } from '../components';
import { OwnAccount } from './own-account';
import { OwnAppConsents } from './own-app-consents';
import { OwnSignIn } from './own-sign-in';
import { SecondFactors } from './second-factors';

/** Customers can sign in to the API, but the console has nothing for them. */
export function StaffOnlyPage(props: { me: User }) {
  return (
    <main class="login" id="main">
      <h1>This console is for staff</h1>
      <p>
        You are signed in as {displayName(props.me)} ({props.me.email}), a customer account. Your orders, profile and store credit are in the
        shop itself.
      </p>
      <button type="button" onClick={() => void signOut()}>
        Log out
      </button>
      <OwnSignIn me={props.me} />
      <SecondFactors />
      <OwnAppConsents />
      <OwnAccount />
    </main>
  );
}
