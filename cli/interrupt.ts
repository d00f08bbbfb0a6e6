/**
 * Ctrl-C in a long run (`eval`, `selfplay`). The first asks the run to stop once the games or
 * episodes under way end: they are kept whole (their logs written, their call records complete),
 * and `--resume` continues from there. A second stops at once: `discard` first removes what the
 * unfinished ones left (call records without a log), so that nothing half-written remains.
 */
export class RunInterrupt {
  private signals = 0;
  private readonly onSignal = () => this.signalled();

  constructor(
    private readonly discard: () => void,
    private readonly resumeHint: string,
    private readonly say: (line: string) => void = (line) => void process.stderr.write(`cerealbar: ${line}\n`),
    private readonly exit: (code: number) => void = (code) => process.exit(code),
  ) {}

  /** Whether the run was asked to stop: take no new game or episode. */
  get requested(): boolean {
    return this.signals > 0;
  }

  /** Listens for Ctrl-C until the returned function is called. */
  listen(): () => void {
    process.on('SIGINT', this.onSignal);
    return () => void process.off('SIGINT', this.onSignal);
  }

  private signalled(): void {
    this.signals++;
    if (this.signals === 1) {
      this.say('interrupted: finishing what is under way, then stopping (Ctrl-C again to stop at once and discard it)');
      return;
    }
    this.discard();
    this.say(`stopped at once; what was under way is discarded. ${this.resumeHint}`);
    this.exit(INTERRUPTED_EXIT);
  }
}

/** The exit status of a run stopped by Ctrl-C (128 + SIGINT), as shells report it. */
export const INTERRUPTED_EXIT = 130;
