/** Plans: how every host plays an agent's answer (one action or several), and evaluation with plans. */
import { StaticOracle } from '../../shared/agents/oracles';
import { followerSituation, planOf, PlanPlayer } from '../../shared/agents/plans';
import type { AgentAction, Answer, EpisodeStart, FollowerAgent, FollowerObservation } from '../../shared/agents/types';
import { makeConfig } from '../../shared/engine/config';
import { loadRecording, type Recording } from '../../shared/eval/recording';
import { DEFAULT_EVAL_OPTIONS, runEpisode } from '../../shared/eval/runner';
import type { LogLine } from '../../shared/log/format';
import { serializeLine } from '../../shared/log/recorder';
import { generateMap } from '../../shared/maps/generate';
import { playSelfPlayGame } from '../../shared/selfplay/game';

describe('planOf', () => {
  test('one action is a plan of one; a list is the plan; an instruction object stays one action', () => {
    expect(planOf<AgentAction>('MF')).toEqual(['MF']);
    expect(planOf<AgentAction>(['MF', 'RL', 'DONE'])).toEqual(['MF', 'RL', 'DONE']);
    expect(planOf<AgentAction>([])).toEqual([]);
    expect(planOf<{ instruction: string } | 'END'>({ instruction: 'go' })).toEqual([{ instruction: 'go' }]);
  });
});

describe('PlanPlayer', () => {
  /** An agent stub that answers the given answers in turn and counts how often it was asked. */
  function answers(...list: Answer<AgentAction>[]): { ask: () => Answer<AgentAction>; asked: () => number } {
    let asked = 0;
    return { ask: () => list[asked++] ?? 'DONE', asked: () => asked };
  }

  test("plays a plan's actions in order and asks again only when it ends", async () => {
    const player = new PlanPlayer<AgentAction>();
    const agent = answers(['MF', 'RL', 'MF'], 'DONE');
    const played = [];
    for (let i = 0; i < 4; i++) played.push(await player.next('instruction 0', agent.ask));
    expect(played).toEqual(['MF', 'RL', 'MF', 'DONE']);
    expect(agent.asked()).toBe(2);
  });

  test('a new situation (another current instruction) drops the rest of the plan', async () => {
    const player = new PlanPlayer<AgentAction>();
    const agent = answers(['MF', 'MF', 'MF'], ['RR']);
    expect(await player.next('instruction 0', agent.ask)).toBe('MF');
    expect(player.pending).toEqual(['MF', 'MF']);
    expect(await player.next('instruction 1', agent.ask)).toBe('RR');
    expect(agent.asked()).toBe(2);
  });

  test('a refused action drops the rest of the plan: the agent is asked again', async () => {
    const player = new PlanPlayer<AgentAction>();
    const agent = answers(['MF', 'MF', 'MF'], ['RL']);
    expect(await player.next('s', agent.ask)).toBe('MF');
    player.refused();
    expect(player.pending).toEqual([]);
    expect(await player.next('s', agent.ask)).toBe('RL');
    expect(agent.asked()).toBe(2);
  });

  test('the end of the turn drops the plan', async () => {
    const player = new PlanPlayer<AgentAction>();
    const agent = answers(['MF', 'MF'], 'RR');
    expect(await player.next('s', agent.ask)).toBe('MF');
    player.turnEnded();
    expect(await player.next('s', agent.ask)).toBe('RR');
  });

  test('an empty plan passes: nothing more is asked or played until the turn ends', async () => {
    const player = new PlanPlayer<AgentAction>();
    const agent = answers([], 'MF');
    expect(await player.next('s', agent.ask)).toBeNull();
    expect(player.passing).toBe(true);
    expect(await player.next('another', agent.ask)).toBeNull();
    expect(agent.asked()).toBe(1);
    player.turnEnded();
    expect(player.passing).toBe(false);
    expect(await player.next('s', agent.ask)).toBe('MF');
  });

  test('nextNow plays answers given at once, the same way', () => {
    const player = new PlanPlayer<AgentAction>();
    const agent = answers(['MB', 'DONE']);
    expect([player.nextNow('s', agent.ask), player.nextNow('s', agent.ask)]).toEqual(['MB', 'DONE']);
    expect(agent.asked()).toBe(1);
  });

  test('the follower situation names the instruction', () => {
    expect(followerSituation({ id: 3 })).not.toBe(followerSituation({ id: 4 }));
    expect(followerSituation(null)).not.toBe(followerSituation({ id: 0 }));
  });
});

describe('evaluation plays plans', () => {
  function selfPlayRecording(seed: number): Recording {
    const lines: LogLine[] = [];
    playSelfPlayGame({ seed, map: generateMap(seed), config: makeConfig() }, (line) => lines.push(line));
    return loadRecording(lines.map((l) => `${serializeLine(l)}\n`).join(''));
  }
  const recording = selfPlayRecording(1);

  /** The recorded actions of each instruction, answered as one plan when the instruction comes up. */
  class RecordedPlans implements FollowerAgent {
    readonly name = 'recorded-plans';
    readonly needsRecording = true;
    private actions: NonNullable<EpisodeStart['recording']>['actions'] = {};
    asked = 0;
    reset(start: EpisodeStart): void {
      this.actions = start.recording!.actions;
    }
    act(observation: FollowerObservation): Answer<AgentAction> {
      this.asked++;
      return this.actions[observation.instruction!.id] ?? 'DONE';
    }
  }

  /** Instructions the recorded follower did in one turn: a whole plan is played without a break. */
  const inOneTurn = recording.instructions
    .map((instruction, index) => ({ instruction, index }))
    .filter(({ instruction }) => instruction.end !== null && instruction.end - instruction.start === instruction.actions.length)
    .filter(({ instruction }) => recording.states.slice(instruction.start, instruction.end!).every((state) => state.turn.role === 'follower'));

  test('a plan of the recorded actions plays the episode exactly as the action-at-a-time oracle, asked once', async () => {
    expect(inOneTurn.length).toBeGreaterThanOrEqual(5);
    const options = { ...DEFAULT_EVAL_OPTIONS, maxActions: 1_000 };
    for (const { index } of inOneTurn) {
      const planned = new RecordedPlans();
      const byPlan = await runEpisode(planned, recording, index, options);
      const oneByOne = await runEpisode(new StaticOracle(), recording, index, options);
      expect(byPlan).toEqual(oneByOne);
      expect(byPlan.error).toBeNull();
      expect(byPlan.single!.sequenceAccuracy).toBe(1);
      expect(planned.asked).toBe(1);
    }
  });

  test('an agent that always passes lets every turn run out: the episode ends without an action or an error', async () => {
    const passer: FollowerAgent = { name: 'passer', reset: () => {}, act: () => [] };
    const result = await runEpisode(passer, recording, 0, { ...DEFAULT_EVAL_OPTIONS, mode: 'cascaded' });
    expect(result.error).toBeNull();
    expect(result.actions).toEqual([]);
    expect(result.cascaded!.instructionsFollowed).toBe(0);
  });

  test('an action that is not a follower code ends the episode with a clear error', async () => {
    const wrong: FollowerAgent = { name: 'wrong', reset: () => {}, act: () => ['MF', 'JUMP' as AgentAction] };
    const result = await runEpisode(wrong, recording, 0, DEFAULT_EVAL_OPTIONS);
    expect(result.error).toMatch(/unknown action "JUMP"; actions are MF, MB, RL, RR, DONE/);
    expect(result.actions).toEqual(['MF']);
  });
});

describe('PlanPlayer.nextNow', () => {
  test('gives the action itself when it is planned or the agent answers at once, and a promise only for an agent that answers later', async () => {
    const plans = new PlanPlayer<AgentAction>();
    expect(plans.nextNow('a', () => ['MF', 'RL'])).toBe('MF');
    expect(plans.nextNow('a', () => { throw new Error('the plan holds: the agent is not asked'); })).toBe('RL');
    const later = plans.nextNow('a', () => Promise.resolve<Answer<AgentAction>>(['RR', 'DONE']));
    expect(later).toBeInstanceOf(Promise);
    expect(await later).toBe('RR');
    expect(plans.nextNow('a', () => 'MB')).toBe('DONE');
    // A thenable that is not a native promise is waited for too.
    const thenable = { then: (resolve: (answer: Answer<AgentAction>) => void) => resolve([]) } as unknown as Promise<Answer<AgentAction>>;
    expect(await plans.nextNow('b', () => thenable)).toBeNull();
    expect(plans.nextNow('b', () => 'MF')).toBeNull();
  });
});
