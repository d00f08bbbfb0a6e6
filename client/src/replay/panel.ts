/**
 * The side panel: facts about the open game, the event at the cursor in words, and the instruction
 * list as it stood then (the current instruction highlighted).
 */
import { describeEvent, instructionNumber } from '../../../shared/log/describe';
import { h, setChildren } from '../ui/dom';
import type { InstructionStatus } from '../../../shared/engine/playerView';
import { duration, timeAt, type ReplayedGame } from './recording';
import { formatGameTime } from './time';
import { VIEWS } from './views';

const STATUS_TAGS: Readonly<Record<InstructionStatus, string>> = { done: 'Done', cancelled: 'Cancelled', current: 'Current', queued: 'Queued' };

export class SidePanel {
  readonly element: HTMLElement;
  private readonly facts = h('dl', { class: 'replay-facts' });
  private readonly eventHeading = h('h2', {}, 'Event');
  private readonly event = h('ul', { class: 'replay-event' });
  private readonly instructions = h('ol', { class: 'instructions' });
  private activeInstruction: number | null = null;

  constructor() {
    const keys = h(
      'div',
      { class: 'keys' },
      h('kbd', {}, '←'), ' ', h('kbd', {}, '→'), ' step back and forward', h('br'),
      h('kbd', {}, 'Space'), ' play and pause', h('br'),
      h('kbd', {}, 'Home'), ' ', h('kbd', {}, 'End'), ' the start and the end', h('br'),
      ...VIEWS.flatMap((view) => [h('kbd', {}, view.key), ' ']), VIEWS.map((view) => view.label.toLowerCase()).join(', '), ' view',
    );
    this.element = h(
      'aside',
      { class: 'side replay-side' },
      h('h2', {}, 'Game'),
      this.facts,
      this.eventHeading,
      this.event,
      h('h2', {}, 'Instructions'),
      // Focusable, so that a long list can be scrolled with the keyboard (↑ ↓).
      h('div', { class: 'replay-instructions', tabindex: 0, role: 'region', 'aria-label': 'Instructions' }, this.instructions),
      h('h2', {}, 'Keys'),
      keys,
    );
  }

  showGame(recording: ReplayedGame): void {
    const { header, end } = recording;
    const fact = (term: string, value: string) => [h('dt', {}, term), h('dd', {}, value)];
    const source = typeof header.meta.source === 'string' ? header.meta.source : null;
    const pool = typeof header.meta.pool === 'string' ? header.meta.pool : null;
    setChildren(
      this.facts,
      ...fact('Game', header.gameId),
      ...fact('Started', new Date(header.startedAt).toLocaleString()),
      ...(source ? fact('Source', source) : []),
      ...(pool ? fact('Pool', pool) : []),
      ...fact('Length', `${formatGameTime(duration(recording))}, ${recording.events.length} events`),
      ...fact('Ended', end ? `${end.reason}, score ${end.score}` : 'not yet (the game is still being played)'),
    );
    this.activeInstruction = null;
  }

  update(recording: ReplayedGame, cursor: number): void {
    const total = recording.events.length;
    setChildren(this.eventHeading, cursor === 0 ? 'Start' : `Event ${cursor} of ${total} at ${formatGameTime(timeAt(recording, cursor))}`);
    const sentences =
      cursor === 0 ? ['The game starts: the leader plays first'] : describeEvent(recording.events[cursor - 1], recording.states[cursor - 1].cards);
    setChildren(this.event, ...sentences.map((sentence) => h('li', {}, sentence)));
    this.showInstructions(recording, cursor);
  }

  private showInstructions(recording: ReplayedGame, cursor: number): void {
    // The leader's view holds every instruction issued so far, with where it stands.
    const rows = recording.views.leader[cursor].instructions;
    if (rows.length === 0) {
      setChildren(this.instructions, h('li', { class: 'empty' }, 'No instructions yet'));
      this.activeInstruction = null;
      return;
    }
    const items = rows.map((row) =>
      h(
        'li',
        { class: row.status === 'current' ? 'current active' : row.status, 'data-instruction': row.id },
        h('span', { class: 'tag' }, STATUS_TAGS[row.status]),
        `${instructionNumber(row.id)}. ${row.text}`,
      ),
    );
    setChildren(this.instructions, ...items);
    const current = rows.findIndex((row) => row.status === 'current');
    const activeId = current >= 0 ? rows[current].id : null;
    // Follow the current instruction down a long list, but only when it changes.
    if (activeId !== null && activeId !== this.activeInstruction) items[current].scrollIntoView({ block: 'nearest' });
    this.activeInstruction = activeId;
  }
}
