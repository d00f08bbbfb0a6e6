/**
 * Evaluation over a game whose leader cancelled instructions (an imported CB2 game, synthetic:
 * test/cb2/cb2Script.ts): cancelled instructions are their own outcome, the recorded cancel is
 * replayed where it came, and the oracles find their instructions by the follower's ids.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importCb2Game } from '../../shared/cb2/import';
import { Oracle, StaticOracle } from '../../shared/agents/oracles';
import type { AgentAction, EpisodeStart, FollowerAgent, FollowerObservation } from '../../shared/agents/types';
import { loadRecording } from '../../shared/eval/recording';
import { aggregate, countUndefined, formatTable, REPORT_VERSION, type EvalReport } from '../../shared/eval/report';
import { DEFAULT_EVAL_OPTIONS, runEpisode, type EvalOptions } from '../../shared/eval/runner';
import type { LogLine } from '../../shared/log/format';
import { serializeLine } from '../../shared/log/recorder';
import { evaluateFiles } from '../../cli/eval/evaluate';
import { feedbackAndCancelGame, scriptAfterFirstInstruction } from '../cb2/cb2Script';

const logText = (lines: readonly LogLine[]) => lines.map((line) => `${serializeLine(line)}\n`).join('');
const text = logText(importCb2Game(feedbackAndCancelGame()).lines);
const recording = loadRecording(text);
const cascaded: EvalOptions = { ...DEFAULT_EVAL_OPTIONS, mode: 'cascaded' };

/** The static oracle, except on the instruction with this text, where it answers `action` every time. */
class StaticOracleExceptOn implements FollowerAgent {
  readonly name = 'static-oracle-except';
  readonly needsRecording = true;
  private readonly oracle = new StaticOracle();
  constructor(
    private readonly text: string,
    private readonly action: AgentAction,
  ) {}
  reset(start: EpisodeStart): void {
    this.oracle.reset(start);
  }
  act(observation: FollowerObservation): AgentAction {
    return observation.instruction?.text === this.text ? this.action : this.oracle.act(observation);
  }
}

describe('E-37: an instruction the recorded leader cancelled is its own outcome', () => {
  test('E-37: the cancelled instructions are not examples (nor the one the game ended on); the recording keeps them apart', () => {
    // Game 34's first instruction (0) and the third of the script (3) were marked DONE; 1 and 2 were cancelled.
    expect(recording.instructions.map((instruction) => instruction.id)).toEqual([0, 3]);
    expect(recording.cancelledIds).toEqual([1, 2]);
    expect(recording.unfinished).toBeNull();
    // What the follower did for the one it was on, up to the cancel (2 was never shown to it).
    expect(recording.cancelled.map(({ id, actions, end }) => ({ id, actions, end }))).toEqual([{ id: 1, actions: ['RR', 'RR'], end: null }]);
  });

  test('E-37: the report counts them apart, in the JSON report and in the table', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'cerealbar-cancelled-')), 'cb2.jsonl');
    writeFileSync(file, text);
    for (const mode of ['single', 'cascaded'] as const) {
      const result = await evaluateFiles({ spec: 'static-oracle' }, [file], { ...DEFAULT_EVAL_OPTIONS, mode });
      expect(result.episodes.map((episode) => episode.instructionId)).toEqual([0, 3]);
      expect(result.instructionsCancelled).toBe(2);
      const report: EvalReport = {
        version: REPORT_VERSION,
        agent: 'static-oracle',
        options: { ...DEFAULT_EVAL_OPTIONS, mode },
        createdAt: '1970-01-01T00:00:00.000Z',
        logs: [file],
        skippedLogs: [],
        instructionsCancelled: result.instructionsCancelled,
        aggregates: aggregate(result.episodes),
        undefinedCounts: countUndefined(result.episodes),
        episodes: result.episodes,
      };
      expect(formatTable(report)).toContain('\n  2 instructions cancelled by the recorded leader: not examples, neither followed nor failed.');
    }
  });
});

describe('E-38: cancelled instructions in a cascade', () => {
  test('E-38: the static oracle plays through the cancelled instruction: the cascade goes on, and it counts in neither the followed nor N - j', async () => {
    const episode = await runEpisode(new StaticOracle(), recording, 0, cascaded);
    expect(episode.error).toBeNull();
    expect(episode.cascaded).toMatchObject({
      instructionsFollowed: 2,
      instructionsPossible: 2,
      proportionFollowed: 1,
      instructionsCancelled: 1,
      played: [
        { instructionId: 0, followed: true },
        { instructionId: 1, followed: false, cancelled: true },
        { instructionId: 3, followed: true },
      ],
    });
  });

  test('E-38: an agent that marks a cancelled instruction DONE before the cancel comes neither follows nor fails it, under the paper\'s convention too', async () => {
    const episode = await runEpisode(new StaticOracleExceptOn('turn right twice', 'DONE'), recording, 0, cascaded);
    const played = episode.cascaded!.played;
    expect(played[0]).toEqual({ instructionId: 0, followed: true });
    expect(played[1]).toEqual({ instructionId: 1, followed: false, cancelled: true });
    // The cascade went on to the instruction after the cancel.
    expect(played.at(-1)).toMatchObject({ instructionId: 3 });
    expect(episode.cascaded!.instructionsPossible).toBe(2);
  });
});

describe('E-39: the recorded cancel comes where it came', () => {
  test('E-39: after as many follower actions as the human took in that turn, whatever the agent does', async () => {
    // The human turned twice; an agent that only turns left is cut off after two turns.
    const episode = await runEpisode(new StaticOracleExceptOn('turn right twice', 'RL'), recording, 0, cascaded);
    const segments = [recording.instructions[0].actions, ['RL', 'RL'], recording.instructions[1].actions];
    expect(episode.actions).toEqual(segments.flat());
    expect(episode.cascaded).toMatchObject({ instructionsFollowed: 2, instructionsCancelled: 1 });
  });

  test('E-39: an example the agent has not marked DONE when the replayed cancel comes is not followed', async () => {
    // Two instructions: the human turns and marks the first DONE, turns once for the second, and the leader cancels it.
    const game = scriptAfterFirstInstruction().instruction('turn once').instruction('and once more').tick().endTurn().tick().rotate(60).tick().done().tick().rotate(60).tick().cancel().tick().game();
    const twoTurns = loadRecording(logText(importCb2Game(game).lines));
    expect(twoTurns.instructions.map((instruction) => instruction.id)).toEqual([0, 1]);
    expect(twoTurns.cancelledIds).toEqual([2]);
    // An agent that keeps turning on the first: three follower actions in, the cancel takes it.
    const slow = new StaticOracleExceptOn('turn once', 'RR');
    const single = await runEpisode(slow, twoTurns, 1, { ...DEFAULT_EVAL_OPTIONS, mode: 'single' });
    expect(single.actions).toEqual(['RR', 'RR', 'RR']);
    expect(single.single!.sequenceAccuracy).toBe(0);
    const cascade = await runEpisode(slow, twoTurns, 1, cascaded);
    expect(cascade.cascaded).toMatchObject({ instructionsFollowed: 0, instructionsPossible: 1, played: [{ instructionId: 1, followed: false }] });
    // The static oracle itself follows it.
    expect((await runEpisode(new StaticOracle(), twoTurns, 1, cascaded)).cascaded).toMatchObject({ instructionsFollowed: 1, instructionsPossible: 1 });
  });
});

describe('E-40: instruction ids with cancels', () => {
  test('E-40: after a cancel of an instruction the follower never saw, the oracles find the next one by its follower id and repeat the human', async () => {
    // Instruction 3 is the follower's 2: the queued 2 it never saw went with the cancel.
    for (const agent of [new StaticOracle(), new Oracle()]) {
      const single = await runEpisode(agent, recording, 1, { ...DEFAULT_EVAL_OPTIONS, mode: 'single' });
      expect(single.instructionId).toBe(3);
      expect(single.actions).toEqual(['RL', 'RL', 'DONE']);
      expect(single.single).toMatchObject({ cardAccuracy: 1, exactEnvAccuracy: 1, sequenceAccuracy: 1 });
      expect((await runEpisode(agent, recording, 0, cascaded)).cascaded).toMatchObject({ proportionFollowed: 1, instructionsCancelled: 1 });
    }
  });
});
