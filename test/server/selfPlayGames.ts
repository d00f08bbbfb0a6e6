/** Self-play games to play again over the network: the same actions sent by real clients. */
import { withoutActor } from '../../shared/engine/actions';
import { makeConfig } from '../../shared/engine/config';
import type { GameState } from '../../shared/engine/state';
import { eventAction, type LogEvent, type LogLine } from '../../shared/log/format';
import { serializeLine } from '../../shared/log/recorder';
import { replay } from '../../shared/log/replay';
import { generateMap } from '../../shared/maps/generate';
import { playSelfPlayGame } from '../../shared/selfplay/game';
import type { Player } from './harness';

const config = makeConfig();

/** A self-play game with few timeouts, to replay over the network, and its true state after each event. */
export function pickSelfPlayGame(): { seed: number; events: LogEvent[]; truth: GameState[] } {
  for (let seed = 1; ; seed++) {
    const lines: LogLine[] = [];
    playSelfPlayGame({ seed, map: generateMap(seed), config }, (line) => lines.push(line));
    const events = lines.filter((l): l is LogEvent => l.kind === 'event');
    const timeouts = events.filter((e) => e.type === 'timeout').length;
    const skipped = events.some((e) => e.outcome.turnEnded?.followerSkipped);
    if (timeouts >= 1 && timeouts <= 3 && skipped && events[events.length - 1].outcome.score >= 3) {
      const truth: GameState[] = [];
      replay(lines.map((l) => `${serializeLine(l)}\n`).join(''), { onState: (state) => truth.push(state) });
      return { seed, events, truth };
    }
  }
}

/** Sends a logged player action from its player (the server's timeouts happen by themselves). */
export function send(player: Player, event: LogEvent): void {
  const action = eventAction(event);
  if (action.type !== 'timeout') player.act(withoutActor(action));
}
