/**
 * The lobby: quick play as leader, follower or either; a new private game (the server draws its
 * code) or one joined by its code; or practice with the server's agent as the partner, as the
 * leader with a scripted follower or as the follower with an agent leader.
 */
import { h } from '../ui/dom';
import { codeProblem, joinOptions, type LinkParameters, type RoleChoice } from './joinRequest';
import type { JoinOptions } from '../../../shared/protocol/messages';

export type JoinHandler = (options: Partial<JoinOptions>) => void;

/** `linkProblem` (a bad study link) disables every way to play; `joinProblem` (the last join failed) is only shown. */
export function lobbyScreen(link: LinkParameters, linkProblem: string | null, joinProblem: string | null, onJoin: JoinHandler): HTMLElement {
  const roles: [RoleChoice, string][] = [['any', 'Either'], ['leader', 'Leader'], ['follower', 'Follower']];
  const chosen = link.role ?? 'any';
  const roleInputs = roles.map(([value, label]) =>
    h('label', {}, h('input', { type: 'radio', name: 'role', value, checked: value === chosen }), label),
  );
  const role = (): RoleChoice => (document.querySelector<HTMLInputElement>('input[name=role]:checked')?.value as RoleChoice) ?? 'any';
  const codeInput = h('input', { type: 'text', name: 'code', placeholder: 'code', maxlength: 50, 'aria-label': 'Private game code', value: link.code ?? '' });
  const error = h('p', { class: 'error-text', role: 'alert' }, linkProblem ?? joinProblem ?? '');

  const button = (label: string, className: string, run: () => void) => {
    const element = h('button', { type: 'button', class: className, disabled: linkProblem !== null }, label);
    element.addEventListener('click', run);
    return element;
  };
  const joinPrivate = () => {
    const code = codeInput.value.trim();
    const problem = code === '' ? 'Type the code your partner shared.' : codeProblem(code);
    if (problem) {
      error.textContent = problem;
      return;
    }
    onJoin(joinOptions(link, { role: role(), code }));
  };
  codeInput.addEventListener('keydown', (event) => {
    if (event.key === 'Enter') joinPrivate();
  });

  const ids = [link.pool && `pool ${link.pool}`, link.workerId && `worker ${link.workerId}`, link.assignmentId && `assignment ${link.assignmentId}`].filter(Boolean);
  return h(
    'main',
    { class: 'lobby' },
    h('h1', {}, 'CerealBar'),
    h('p', { class: 'subtitle' }, 'Collect sets of cards together. The leader sees the whole world and writes instructions; the follower sees only what is in front of it and carries them out.'),
    h('fieldset', {}, h('legend', {}, 'Your role'), h('div', { class: 'row roles' }, ...roleInputs)),
    h('fieldset', {}, h('legend', {}, 'Quick play'), h('div', { class: 'row' }, button('Find a partner', 'quick-play', () => onJoin(joinOptions(link, { role: role() }))))),
    h(
      'fieldset',
      {},
      h('legend', {}, 'Private game'),
      h(
        'div',
        { class: 'row' },
        button('Create a game', 'secondary create-private', () => onJoin(joinOptions(link, { role: role(), private: true }))),
        h('span', {}, 'or join one:'),
        codeInput,
        button('Join', 'secondary join-private', joinPrivate),
      ),
    ),
    h(
      'fieldset',
      {},
      h('legend', {}, 'Practice'),
      h(
        'div',
        { class: 'row' },
        button('Play as leader with a scripted follower', 'secondary bot-game', () => onJoin(joinOptions(link, { role: 'leader', botFollower: true }))),
        button('Play as follower with an agent leader', 'secondary bot-leader-game', () => onJoin(joinOptions(link, { role: 'follower', botLeader: true }))),
      ),
      h('div', { class: 'row' }, 'Learn to play:', tutorialLink('leader'), tutorialLink('follower')),
    ),
    error,
    ids.length > 0 ? h('p', { class: 'meta' }, `Playing in ${ids.join(' · ')}`) : null,
  );
}

/** A link to the tutorial for a role, on this page with its link's parameters kept. */
function tutorialLink(role: 'leader' | 'follower'): HTMLElement {
  const query = new URLSearchParams(location.search);
  query.set('tutorial', role);
  return h('a', { class: 'tutorial-link', 'data-role': role, href: `?${query}` }, `the ${role}'s tutorial`);
}
