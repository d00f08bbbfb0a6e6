/** A waiting game's place in the matchmaking queue, from the matchmaker's listing. */
import { queuePlace, type ListedRoom, type SeatListing } from '../../server/rooms/queue';

const needsFollower: SeatListing = { pool: 'default', code: '', study: '', leaderOpen: false, followerOpen: true, phase: 'waiting', workers: [], addresses: [], agentJoin: null };
const room = (roomId: string, metadata: Partial<SeatListing> = {}, flags: Partial<ListedRoom> = {}): ListedRoom => ({
  roomId,
  locked: false,
  private: false,
  metadata: { ...needsFollower, ...metadata },
  ...flags,
});

test('P-20: games lacking the same seat in the same pool and code queue in the order listed', () => {
  const rooms = [room('a'), room('b'), room('c')];
  expect(queuePlace('a', rooms)).toEqual({ position: 1, waiting: 3 });
  expect(queuePlace('b', rooms)).toEqual({ position: 2, waiting: 3 });
  expect(queuePlace('c', rooms)).toEqual({ position: 3, waiting: 3 });
});

test('P-20: games of another pool or code, lacking another seat, or locked do not count', () => {
  const rooms = [
    room('other-pool', { pool: 'expert' }),
    room('private', { code: 'lab7' }),
    room('needs-leader', { leaderOpen: true, followerOpen: false }),
    // A scripted-follower game before its leader is seated.
    room('empty', { leaderOpen: true, followerOpen: true }),
    room('started', {}, { locked: true }),
    room('hidden', {}, { private: true }),
    room('self'),
  ];
  expect(queuePlace('self', rooms)).toEqual({ position: 1, waiting: 1 });
  expect(queuePlace('private', [...rooms, room('private-2', { code: 'lab7' })])).toEqual({ position: 1, waiting: 2 });
});

test('a game that is not listed or not open has no place', () => {
  expect(queuePlace('gone', [room('a')])).toBeNull();
  expect(queuePlace('a', [room('a', {}, { locked: true })])).toBeNull();
  expect(queuePlace('a', [room('a', {}, { metadata: undefined })])).toBeNull();
});
