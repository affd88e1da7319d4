import { addressClass, ipHostText, parseIp, type AddressClass } from '../src/domain/addresses';

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
