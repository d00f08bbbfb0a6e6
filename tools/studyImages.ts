/**
 * The pictures of the two views on a study's rules page: the documentation's 1280x800 screenshots
 * (docs/images/, remade by `npm run docs:screenshots`) scaled to 640 px wide WebP in headless
 * Chromium, which the browser tests already need, so no image tool has to be installed.
 *
 *   npx tsx tools/studyImages.ts
 *
 * writes client/study/images/leader.webp and follower.webp, each under MAX_BYTES.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { launchChromium } from '../shared/frames/node/chromium';

const ROOT = join(__dirname, '..');
const WIDTH = 640;
/** The rules page loads both: together they stay well under what one screenshot weighs. */
const MAX_BYTES = 60_000;
const QUALITIES = [0.85, 0.75, 0.65, 0.55];

async function main(): Promise<void> {
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    for (const view of ['leader', 'follower']) {
      const source = `data:image/png;base64,${readFileSync(join(ROOT, 'docs/images', `${view}-1280x800.png`)).toString('base64')}`;
      let written = false;
      for (const quality of QUALITIES) {
        const dataUrl = await page.evaluate(
          async ([source, width, quality]) => {
            const image = new Image();
            image.src = source as string;
            await image.decode();
            const canvas = document.createElement('canvas');
            canvas.width = width as number;
            canvas.height = Math.round((image.height * (width as number)) / image.width);
            const context = canvas.getContext('2d')!;
            context.imageSmoothingQuality = 'high';
            context.drawImage(image, 0, 0, canvas.width, canvas.height);
            return canvas.toDataURL('image/webp', quality as number);
          },
          [source, WIDTH, quality] as const,
        );
        const bytes = Buffer.from(dataUrl.replace(/^data:image\/webp;base64,/, ''), 'base64');
        if (bytes.length > MAX_BYTES) continue;
        const out = join(ROOT, 'client/study/images', `${view}.webp`);
        writeFileSync(out, bytes);
        console.log(`${out}: ${bytes.length} bytes (quality ${quality})`);
        written = true;
        break;
      }
      if (!written) throw new Error(`${view}: no quality down to ${QUALITIES.at(-1)} fits in ${MAX_BYTES} bytes`);
    }
  } finally {
    await browser.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
