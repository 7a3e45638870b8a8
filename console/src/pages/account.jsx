// Account: the first-party dashboard (/dashboard/api/v1, which only the
// console's own sign-in may call) and GET /api/v1/me, in tabs that are
// addresses of their own (/app/account[/keys|apps|usage|billing]), so GET
// /me's links (api_keys, billing) land on the right one.
import { useTitle } from '../ui.jsx';
import Overview from '../account/overview.jsx';
import Keys from '../account/keys.jsx';
import Apps from '../account/apps.jsx';
import Usage from '../account/usage.jsx';
import Billing from '../account/billing.jsx';

const TABS = [
  ['overview', '/app/account', 'Overview', Overview],
  ['keys', '/app/account/keys', 'API keys', Keys],
  ['apps', '/app/account/apps', 'Connected apps', Apps],
  ['usage', '/app/account/usage', 'Usage', Usage],
  ['billing', '/app/account/billing', 'Billing', Billing],
];

export default function Account({ params }) {
  const tab = TABS.find((t) => t[0] === params.tab) || TABS[0];
  const Tab = tab[3];
  useTitle(tab[0] === 'overview' ? 'Account' : `${tab[2]} · Account`);
  return (
    <section class="account">
      <h1>Account</h1>
      <nav aria-label="Account" class="tabs">
        <ul>
          {TABS.map(([id, href, label]) => (
            <li key={id}>
              <a href={href} aria-current={id === tab[0] ? 'page' : undefined}>
                {label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <Tab />
    </section>
  );
}
