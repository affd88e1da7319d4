import { addressClass, ipHostText, parseIp, type AddressClass } from '../../src/domain/addresses';

describe('IP addresses for the fetch-hop rule', () => {
  const classes: ReadonlyArray<readonly [string, AddressClass]> = [
    ['93.184.216.34', 'public'],
    ['8.8.8.8', 'public'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'reserved'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.1', 'public'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['169.254.169.254', 'link_local'],
    ['224.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'link_local'],
    ['::ffff:8.8.8.8', 'public'],
    ['64:ff9b::a9fe:a9fe', 'link_local'],
    ['2002:7f00:1::', 'loopback'],
    ['fd00::1', 'private'],
    ['fe80::1', 'link_local'],
    ['ff02::1', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['2606:4700:4700::1111', 'public'],
  ];
  it.each(classes)('classifies %s as %s', (text, expected) => {
    const address = parseIp(text);
    expect(address).toBeDefined();
    expect(addressClass(address!)).toBe(expected);
  });

  it.each(['127.1', '0x7f.0.0.1', '0177.0.0.1', '256.0.0.1', '1.2.3.4.5', '', 'localhost', ':::', '1::2::3', '::1%eth0', '[::1]', '12345::'])(
    'refuses %j as an address (only canonical dotted IPv4 and IPv6 text)',
    (text) => {
      expect(parseIp(text)).toBeUndefined();
    },
  );

  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['::1', '[::1]'],
    ['::ffff:127.0.0.1', '[::ffff:7f00:1]'],
    ['2001:0db8:0000:0000:0001:0000:0000:0001', '[2001:db8::1:0:0:1]'],
    ['1:0:0:2:0:0:0:3', '[1:0:0:2::3]'],
    ['1:2:3:4:5:6:7:8', '[1:2:3:4:5:6:7:8]'],
    ['1:0:2:3:4:5:6:7', '[1:0:2:3:4:5:6:7]'],
  ])('prints %s as URL host text %s (as the WHATWG URL parser does)', (text, host) => {
    expect(ipHostText(parseIp(text)!)).toBe(host);
    expect(new URL(`http://${host}/`).hostname).toBe(host);
  });
});

describe('IPv6 text the parser takes or refuses', () => {
  it('parses the longest IPv6 text, six full groups and a dotted quad (45 characters)', () => {
    const text = 'ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255';
    expect(text).toHaveLength(45);
    expect(parseIp(text)).toEqual({ family: 6, groups: [0xffff, 0xffff, 0xffff, 0xffff, 0xffff, 0xffff, 0xffff, 0xffff] });
  });

  it('parses a dotted quad after six groups written out in full', () => {
    expect(parseIp('0:0:0:0:0:ffff:127.0.0.1')).toEqual({ family: 6, groups: [0, 0, 0, 0, 0, 0xffff, 0x7f00, 1] });
  });

  it('parses a dotted quad right after "::" (IPv4-compatible form)', () => {
    expect(parseIp('::1.2.3.4')).toEqual({ family: 6, groups: [0, 0, 0, 0, 0, 0, 0x102, 0x304] });
    expect(parseIp('1::1.2.3.4')).toEqual({ family: 6, groups: [1, 0, 0, 0, 0, 0, 0x102, 0x304] });
  });

  it.each(['1:2:3:4:5:6:7', '1:2:3:4:5:6:7:8:9', '1:2:3:4:5:1.2.3.4'])('refuses %s: without "::" it needs exactly eight groups', (text) => {
    expect(parseIp(text)).toBeUndefined();
  });

  it('refuses "::" that stands for no group (eight groups besides it)', () => {
    expect(parseIp('1:2:3:4::5:6:7:8')).toBeUndefined();
    expect(parseIp('1:2:3:4:5:6::1.2.3.4')).toBeUndefined();
  });

  it('takes "::" standing for a single zero group', () => {
    expect(parseIp('1:2:3:4:5:6::7')).toEqual({ family: 6, groups: [1, 2, 3, 4, 5, 6, 0, 7] });
  });
});

describe('IPv6 special-purpose ranges', () => {
  const classes: ReadonlyArray<readonly [string, AddressClass, string]> = [
    ['::2', 'reserved', 'the rest of ::/96 is not loopback'],
    ['::8.8.8.8', 'reserved', 'IPv4-compatible (::a.b.c.d) is refused whatever it embeds'],
    ['::7f00:1', 'reserved', 'IPv4-compatible loopback is refused too'],
    ['fd00::ffff:7f00:1', 'private', 'a group 5 of ffff outside ::ffff:0:0/96 is not IPv4-mapped'],
    ['64:ff9b::808:808', 'public', 'NAT64 64:ff9b::/96 takes the class of the embedded IPv4 address'],
    ['2600:ff9b::7f00:1', 'public', 'NAT64 needs group 0 = 64 (2600:ff9b:: is global unicast)'],
    ['64:ff9b:1::808:808', 'reserved', 'the local-use NAT64 prefix 64:ff9b:1::/48 stays inside'],
    ['64:ff9b:2::808:808', 'public', 'only 64:ff9b:1::/48 is local-use NAT64'],
    ['2600:ff9b:1::1', 'public', 'local-use NAT64 needs group 0 = 64'],
    ['64:ff9a:1::808:808', 'public', 'local-use NAT64 needs group 1 = ff9b'],
    ['100::1', 'reserved', 'discard-only 100::/64'],
    ['100:0:0:0:1::1', 'reserved', 'all of 100::/64, whatever groups 4-7 hold'],
    ['100:1::1', 'public', 'outside 100::/64 (group 1)'],
    ['100:0:1::1', 'public', 'outside 100::/64 (group 2)'],
    ['100:0:0:1::1', 'public', 'outside 100::/64 (group 3)'],
    ['2001::1', 'reserved', 'Teredo 2001::/32 tunnels to arbitrary IPv4 hosts'],
    ['2001:4860:4860::8888', 'public', '2001:4860:: is neither Teredo nor documentation'],
    ['2600:db8::1', 'public', 'documentation is 2001:db8::/32 only'],
    ['fec0::1', 'private', 'site-local fec0::/10 (deprecated)'],
    ['feff::1', 'private', 'site-local reaches up to feff'],
  ];
  it.each(classes)('classifies %s as %s (%s)', (text, expected) => {
    expect(addressClass(parseIp(text)!)).toBe(expected);
  });

  it.each([
    ['64:ff9b:2::7f00:1', 'group 2'],
    ['64:ff9b:0:1::7f00:1', 'group 3'],
    ['64:ff9b::1:0:7f00:1', 'group 4'],
    ['64:ff9b::1:7f00:1', 'group 5'],
    ['64:1::7f00:1', 'group 1'],
    ['2600:ff9b::7f00:1', 'group 0'],
  ])('does not take %s for NAT64 64:ff9b::/96 (%s differs): it is not the embedded loopback', (text) => {
    expect(addressClass(parseIp(text)!)).not.toBe('loopback');
  });
});
