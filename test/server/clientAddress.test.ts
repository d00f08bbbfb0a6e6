/** A requester's address as a study's limits see it: a keyed hash of its network (P-134). */
import { addressNetwork, addressTag } from '../../server/http/clientAddress';

describe('P-134: address tags', () => {
  test.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8:1:2::1', '2001:0db8:0001:0002::/64'],
    ['2001:DB8:1:2:ffff:ffff:ffff:ffff', '2001:0db8:0001:0002::/64'],
    ['::1', '0000:0000:0000:0000::/64'],
    ['fe80::1:2', 'fe80:0000:0000:0000::/64'],
    ['not an address', null],
  ])('P-134: %s is counted as %s', (address, network) => {
    expect(addressNetwork(address)).toBe(network);
  });

  test('P-134: the tag is keyed and never the address; unknown addresses have none', () => {
    const tag = addressTag('203.0.113.7', 'key-one');
    expect(tag).toMatch(/^[0-9a-f]{16}$/);
    expect(tag).not.toContain('203');
    expect(addressTag('203.0.113.7', 'key-two')).not.toBe(tag);
    expect(addressTag('2001:db8:1:2::1', 'key-one')).toBe(addressTag('2001:db8:1:2::ff', 'key-one'));
    expect(addressTag(undefined, 'key-one')).toBeUndefined();
  });
});
