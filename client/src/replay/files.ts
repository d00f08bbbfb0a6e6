/** Log files dropped anywhere on the page. The page is marked while a file is dragged over it. */

const DRAGGING_CLASS = 'replay-dragging';

export function acceptDroppedFiles(target: HTMLElement, onFile: (file: File) => void): void {
  // dragenter and dragleave fire for every child crossed: count them to know when the drag left.
  let depth = 0;
  const carriesFiles = (event: DragEvent) => event.dataTransfer?.types.includes('Files') ?? false;
  const setDragging = (dragging: boolean) => target.classList.toggle(DRAGGING_CLASS, dragging);
  target.addEventListener('dragenter', (event) => {
    if (!carriesFiles(event)) return;
    depth++;
    setDragging(true);
  });
  target.addEventListener('dragleave', (event) => {
    if (!carriesFiles(event)) return;
    depth = Math.max(0, depth - 1);
    if (depth === 0) setDragging(false);
  });
  target.addEventListener('dragover', (event) => {
    if (!carriesFiles(event)) return;
    // Without this the browser would open the file itself instead of letting the page have it.
    event.preventDefault();
    event.dataTransfer!.dropEffect = 'copy';
  });
  target.addEventListener('drop', (event) => {
    if (!carriesFiles(event)) return;
    event.preventDefault();
    depth = 0;
    setDragging(false);
    const file = event.dataTransfer!.files[0];
    if (file) onFile(file);
  });
}
