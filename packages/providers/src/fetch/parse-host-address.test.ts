import { describe, expect, it } from 'vitest';
import { parseHostAddress } from './parse-host-address';

describe('parseHostAddress', () => {
  it.each([
    ['127.0.0.1', '127.0.0.1'],
    ['2130706433', '127.0.0.1'],
    ['0177.0.0.1', '127.0.0.1'],
    ['0x7f.1', '127.0.0.1'],
    ['0X7F.0.0.1', '127.0.0.1'],
    ['127.1', '127.0.0.1'],
    ['10.1', '10.0.0.1'],
    ['192.168.257', '192.168.1.1'],
    ['0x', '0.0.0.0'],
    ['0', '0.0.0.0'],
    ['1.2.3.4.', '1.2.3.4'],
    ['0xa9fea9fe', '169.254.169.254'],
    ['4294967295', '255.255.255.255'],
  ])('normalises the IPv4 spelling %s to %s', (input, expected) => {
    expect(parseHostAddress(input)).toBe(expected);
  });

  it.each([
    ['[::1]', '::1'],
    ['::', '::'],
    ['[fe80::1]', 'fe80::1'],
    ['fe80::1%eth0', 'fe80::1'],
    ['[::ffff:127.0.0.1]', '::ffff:127.0.0.1'],
    ['[::ffff:7f00:1]', '::ffff:127.0.0.1'],
    ['[::FFFF:7F00:1]', '::ffff:127.0.0.1'],
    ['::127.0.0.1', '::7f00:1'],
    ['2001:0db8:0000:0000:0000:0000:0000:0001', '2001:db8::1'],
    ['2001:db8:0:1:0:0:0:1', '2001:db8:0:1::1'],
    ['1:0:0:2:0:0:0:3', '1:0:0:2::3'],
    ['1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8'],
    ['fd00:ec2::254', 'fd00:ec2::254'],
    ['64:ff9b::10.0.0.1', '64:ff9b::a00:1'],
  ])('normalises the IPv6 literal %s to %s', (input, expected) => {
    expect(parseHostAddress(input)).toBe(expected);
  });

  it.each([
    'example.com',
    'localhost',
    '1.2.3.com',
    '4294967296',
    '256.1.1.1',
    '1.2.3.256',
    '1.2.65536',
    '08.0.0.1',
    '0x1g.1',
    '1..2',
    '',
    '1.2.3.4.5',
    ':::',
    '1::2::3',
    '1:2:3:4:5:6:7:8:9',
    '12345::',
    '::ffff:1.2.3.256',
    '[1:2:3:4:5:6:7]',
  ])('returns undefined for the name or invalid literal %j', (input) => {
    expect(parseHostAddress(input)).toBeUndefined();
  });
});
