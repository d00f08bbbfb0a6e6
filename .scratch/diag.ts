import { readFileSync } from 'node:fs';
import { loadRecording } from '../shared/eval/recording';
const [file, id] = [process.argv[2], Number(process.argv[3])];
const rec = loadRecording(readFileSync(file, 'utf8'));
const ins = rec.instructions.find((i) => i.id === id)!;
console.log('human', ins.actions.join(' '), 'changed', ins.changedCards, 'start', ins.start, 'end', ins.end);
for (let i = ins.start; i < (ins.end ?? rec.events.length); i++) {
  const e = rec.events[i];
  console.log(i, e.actor, e.type, JSON.stringify((e as any).payload ?? ''), JSON.stringify(e.outcome.toggled ?? ''), JSON.stringify(e.outcome.pose ?? ''), e.outcome.set ? 'SET' : '');
}
const s = rec.states[ins.start];
for (const c of rec.states[ins.start].cards) if (ins.changedCards.includes(c.id)) console.log('card', c);
console.log('follower', s.follower, 'leader', s.leader);
