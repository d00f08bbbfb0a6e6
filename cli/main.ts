/** The `cerealbar` command line. Each command lives in cli/commands/. */
import { Command, CommanderError } from 'commander';
import { ENGINE_VERSION } from '../shared/engine/version';
import { registerAgentCommand } from './commands/agent';
import { registerDatasetCommands } from './commands/dataset';
import { registerImportCommands } from './commands/import';
import { registerLlmCommands } from './commands/llm';
import { registerEvalCommand } from './commands/eval';
import { registerFramesCommand } from './commands/frames';
import { registerMapsCommands } from './commands/maps';
import { registerRenderCommand } from './commands/render';
import { registerReplayCommand } from './commands/replay';
import { registerSelfPlayCommand } from './commands/selfplay';
import { registerServeCommand } from './commands/serve';
import { registerStudyCommands } from './commands/study';
import { CliError } from './errors';
import { noteCommandLine } from './runManifest';

export function buildProgram(): Command {
  const program = new Command('cerealbar')
    .description('CerealBar: a collaborative instruction-following game for research')
    .version(ENGINE_VERSION, '-V, --version', 'print the engine version')
    .showHelpAfterError()
    .exitOverride();
  registerReplayCommand(program);
  registerRenderCommand(program);
  registerFramesCommand(program);
  registerSelfPlayCommand(program);
  registerMapsCommands(program);
  registerServeCommand(program);
  registerEvalCommand(program);
  registerAgentCommand(program);
  registerStudyCommands(program);
  registerDatasetCommands(program);
  registerImportCommands(program);
  registerLlmCommands(program);
  return program;
}

/**
 * A reader that stops early (`cerealbar replay ... --json | head`) closes the pipe: the command
 * then stops quietly with status 0, as Unix tools do, instead of an EPIPE stack trace.
 */
// Marked on the process, not in this module: a test runner loads the module afresh for each test file in one process.
const WATCHING_THE_PIPE = Symbol.for('cerealbar.watchingThePipe');
function stopQuietlyOnClosedPipe(): void {
  // Once per process: tests run many commands in one.
  const marked = process as unknown as Record<symbol, boolean>;
  if (marked[WATCHING_THE_PIPE]) return;
  marked[WATCHING_THE_PIPE] = true;
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    process.stderr.write(`cerealbar: cannot write the output: ${error.message}\n`);
    process.exit(74);
  });
}

export async function runCli(argv: string[]): Promise<number> {
  stopQuietlyOnClosedPipe();
  noteCommandLine(argv);
  try {
    await buildProgram().parseAsync(argv, { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    if (error instanceof CliError) {
      process.stderr.write(`cerealbar: ${error.message}\n`);
      return error.exitCode;
    }
    process.stderr.write(`cerealbar: internal error: ${(error as Error)?.stack ?? String(error)}\n`);
    return 70;
  }
}
