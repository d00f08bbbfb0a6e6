/** Evaluation over recorded self-play games: the oracles as upper bounds, and the appendix F scores. */
import { HeuristicAgent } from '../../shared/agents/builtin';
import { Oracle, StaticOracle } from '../../shared/agents/oracles';
import type { AgentAction, FollowerAgent } from '../../shared/agents/types';
import { makeConfig } from '../../shared/engine/config';
import type { LogLine } from '../../shared/log/format';
import { serializeLine } from '../../shared/log/recorder';
import { generateMap } from '../../shared/maps/generate';
import { playSelfPlayGame } from '../../shared/selfplay/game';
import { loadRecording, type Recording } from '../../shared/eval/recording';
import { DEFAULT_EVAL_OPTIONS, runEpisode, type EpisodeResult, type EvalOptions } from '../../shared/eval/runner';
import { aggregate } from '../../shared/eval/report';

function selfPlayRecording(seed: number): Recording {
  const lines: LogLine[] = [];
  playSelfPlayGame({ seed, map: generateMap(seed), config: makeConfig() }, (line) => lines.push(line));
  return loadRecording(lines.map((l) => `${serializeLine(l)}\n`).join(''));
}

const recordings = [1, 2, 3].map(selfPlayRecording);
const longest = Math.max(...recordings.flatMap((r) => r.instructions.map((i) => i.actions.length)));

async function evaluate(agent: FollowerAgent, options: Partial<EvalOptions>): Promise<EpisodeResult[]> {
  const results: EpisodeResult[] = [];
  for (const recording of recordings) {
    for (let i = 0; i < recording.instructions.length; i++) results.push(await runEpisode(agent, recording, i, { ...DEFAULT_EVAL_OPTIONS, ...options }));
  }
  return results;
}

describe('segmenting a recorded game', () => {
  test('every instruction the follower marked DONE, with its actions, path and changed cards', () => {
    const recording = recordings[0];
    expect(recording.instructions.length).toBeGreaterThan(10);
    for (const instruction of recording.instructions) {
      expect(instruction.actions[instruction.actions.length - 1]).toBe('DONE');
      const moves = instruction.actions.filter((a) => a !== 'DONE').length;
      expect(instruction.path).toHaveLength(moves + 1);
      expect(recording.states[instruction.start].queue[0].id).toBe(instruction.id);
      expect(recording.states[instruction.start].turn.role).toBe('follower');
      expect(recording.states[instruction.end!].previousInstruction?.id).toBe(instruction.id);
    }
  });
});

describe('single-instruction evaluation', () => {
  test('the static oracle and the oracle reproduce the recorded cards, with an action limit above the longest instruction', async () => {
    for (const agent of [new StaticOracle(), new Oracle()]) {
      const results = await evaluate(agent, { mode: 'single', maxActions: longest + 1 });
      const scores = aggregate(results);
      expect(scores.cardAccuracy).toBe(1);
      expect(scores.exactEnvAccuracy).toBe(1);
      expect(scores.SR).toBe(1);
      expect(scores.agentErrors).toBe(0);
    }
    const replayed = aggregate(await evaluate(new StaticOracle(), { mode: 'single', maxActions: longest + 1 }));
    expect(replayed.sequenceAccuracy).toBe(1);
    expect(replayed.nDTW).toBe(1);
  });

  test('the default limit of 25 actions cuts exactly the instructions the recorded follower needed more for', async () => {
    const results = await evaluate(new StaticOracle(), { mode: 'single' });
    const all = recordings.flatMap((r) => r.instructions);
    results.forEach((result, i) => {
      const tooLong = all[i].actions.length > 25;
      expect(result.limitReached).toBe(tooLong);
      expect(result.single!.sequenceAccuracy).toBe(tooLong ? 0 : 1);
      expect(result.actions.length).toBe(Math.min(25, all[i].actions.length));
    });
  });
});

describe('cascaded evaluation (appendix F)', () => {
  test('the oracles follow every instruction and score every point when nothing cuts them short', async () => {
    for (const agent of [new StaticOracle(), new Oracle()]) {
      const results = await evaluate(agent, { mode: 'cascaded', maxActions: longest + 1 });
      for (const result of results) {
        expect(result.cascaded!.instructionsFollowed).toBe(result.cascaded!.instructionsPossible);
        if (result.cascaded!.proportionPoints !== null) expect(result.cascaded!.proportionPoints).toBe(1);
      }
    }
  });

  test('the maximum for example j is N - j instructions and the points scored from j on', async () => {
    const recording = recordings[0];
    const n = recording.instructions.length;
    const finalScore = recording.states[recording.states.length - 1].score;
    for (const index of [0, Math.floor(n / 2), n - 1]) {
      const result = await runEpisode(new StaticOracle(), recording, index, { ...DEFAULT_EVAL_OPTIONS, mode: 'cascaded', maxActions: longest + 1 });
      expect(result.cascaded!.instructionsPossible).toBe(n - index);
      expect(result.cascaded!.pointsPossible).toBe(finalScore - recording.states[recording.instructions[index].start].score);
    }
  });

  test('an agent that marks every instruction DONE at once follows none that needed a card', async () => {
    const lazy: FollowerAgent = { name: 'lazy', reset: () => {}, act: (): AgentAction => 'DONE' };
    const results = await evaluate(lazy, { mode: 'cascaded' });
    const scores = aggregate(results);
    expect(scores.proportionFollowed).toBeLessThan(0.2);
    expect(scores.proportionPoints).toBeLessThan(0.5);
  });
});

describe('the two cascade conventions on self-play games', () => {
  test('they agree up to the first failure; only continue plays past it', async () => {
    const stop = await evaluate(new HeuristicAgent(), { mode: 'cascaded' });
    const goOn = await evaluate(new HeuristicAgent(), { mode: 'cascaded', cascade: 'continue' });
    let playedPast = 0;
    stop.forEach((s, i) => {
      const c = goOn[i];
      expect(s.cascaded!.cascade).toBe('stop-at-first-failure');
      expect(c.cascaded!.cascade).toBe('continue');
      expect(s.cascaded!.instructionsFollowed).toBe(c.cascaded!.instructionsFollowed);
      // Stopping: every instruction played was followed, but perhaps the last one.
      const played = s.cascaded!.played;
      expect(played.slice(0, -1).every((p) => p.followed)).toBe(true);
      expect(played.length).toBeLessThanOrEqual(s.cascaded!.instructionsFollowed + 1);
      // The same moves up to the stop.
      expect(c.actions.slice(0, s.actions.length)).toEqual(s.actions);
      if (c.cascaded!.played.length > played.length) playedPast++;
    });
    expect(playedPast).toBeGreaterThan(0);
  });
});

describe('agent failures are reported per example', () => {
  test('an agent that throws gets an error in its episode; the other episodes go on', async () => {
    let calls = 0;
    const flaky: FollowerAgent = {
      name: 'flaky',
      reset: () => {},
      act: () => {
        calls++;
        if (calls === 3) throw new Error('out of memory');
        return 'DONE';
      },
    };
    const results = await evaluate(flaky, { mode: 'single' });
    const failed = results.filter((r) => r.error);
    expect(failed).toHaveLength(1);
    expect(failed[0].error).toMatch(/out of memory/);
    expect(failed[0].single!.cardAccuracy).toBe(0);
    expect(results.length).toBe(recordings.reduce((n, r) => n + r.instructions.length, 0));
  });
});
