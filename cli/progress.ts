/** `eval`'s and `render`'s progress bar: a line on stderr, redrawn in place on a terminal, every 10% otherwise. */
export function progress(total: number, unit: string): { tick: () => void; end: () => void } {
  const started = Date.now();
  const tty = process.stderr.isTTY;
  let done = 0;
  let lastDecile = -1;
  const draw = () => {
    const rate = done / Math.max(0.001, (Date.now() - started) / 1000);
    const filled = total === 0 ? 30 : Math.round((30 * done) / total);
    const line = `[${'='.repeat(filled)}${' '.repeat(30 - filled)}] ${done}/${total} ${unit}, ${rate.toFixed(0)}/s`;
    if (tty) process.stderr.write(`\r${line}`);
    else if (Math.floor((10 * done) / Math.max(1, total)) !== lastDecile) {
      lastDecile = Math.floor((10 * done) / Math.max(1, total));
      process.stderr.write(`${line}\n`);
    }
  };
  return {
    tick: () => {
      done++;
      if (tty ? done % 20 === 0 || done === total : true) draw();
    },
    end: () => {
      draw();
      if (tty) process.stderr.write('\n');
    },
  };
}
