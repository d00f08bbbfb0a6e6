/**
 * The admin page (/admin): the researcher's view of the studies the server runs, behind the admin
 * token (kept in this tab's sessionStorage, as the replay viewer keeps it). It refreshes every few
 * seconds, so waiting times and games being played stay current.
 */
import '../styles.css';
import './admin.css';
import { ServerError, storedToken, storeToken } from '../replay/server';
import { h, setChildren } from '../ui/dom';
import { AdminApi } from './api';
import { studyPanel } from './studyPanel';

const REFRESH_MS = 5000;

const app = document.getElementById('app')!;
const problem = h('p', { class: 'error-text', role: 'alert' });
const studies = h('div', { class: 'admin-studies', 'aria-live': 'polite', 'aria-busy': 'true' });
const updated = h('p', { class: 'admin-updated' });
let timer: ReturnType<typeof setTimeout> | null = null;

function askForToken(message = ''): void {
  if (timer !== null) clearTimeout(timer);
  const input = h('input', { type: 'password', id: 'admin-token', autocomplete: 'off', required: true });
  const form = h(
    'form',
    { class: 'admin-token' },
    h('label', { for: 'admin-token' }, 'Admin token (the one the server printed when it started, or ADMIN_TOKEN)'),
    input,
    h('button', { type: 'submit' }, 'Open'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    storeToken(input.value.trim());
    show(new AdminApi(input.value.trim()));
  });
  setChildren(app, h('main', { class: 'lobby admin-login' }, h('h1', {}, 'CerealBar admin'), form, h('p', { class: 'error-text', role: 'alert' }, message)));
  input.focus();
}

function show(api: AdminApi): void {
  const signOut = h('button', { type: 'button', class: 'secondary', onclick: () => (storeToken(null), askForToken()) }, 'Forget the token');
  setChildren(app, h('main', { class: 'admin' }, h('header', { class: 'admin-head' }, h('h1', {}, 'Studies'), updated, signOut), problem, studies));
  void refresh(api);
}

async function refresh(api: AdminApi): Promise<void> {
  try {
    const overviews = await api.studies();
    const panels = await Promise.all(
      overviews.map(async (study) => studyPanel(study, await api.workers(study.id), await api.games(study.id), { api, changed: () => void refresh(api), failed: (message) => setChildren(problem, message) })),
    );
    setChildren(studies, ...(panels.length > 0 ? panels : [h('p', {}, 'This server runs no study: start it with serve --study FILE.')]));
    studies.setAttribute('aria-busy', 'false');
    updated.textContent = `Updated ${new Date().toLocaleTimeString()}`;
    setChildren(problem);
  } catch (error) {
    if (error instanceof ServerError && error.badToken) return askForToken(error.message);
    setChildren(problem, `Could not refresh: ${(error as Error).message}`);
  }
  if (timer !== null) clearTimeout(timer);
  timer = setTimeout(() => void refresh(api), REFRESH_MS);
}

const token = storedToken();
if (token) show(new AdminApi(token));
else askForToken();
