#!/usr/bin/env python3
"""Test vectors for the "pekko" and "pekko-string" consistent-hash modes.

An implementation independent of dataplane/logic.c, written from Pekko's
published Scala sources (apache/pekko, actor/src/main/scala/org/apache/
pekko/routing/): MurmurHash.scala (startHash, extendHash, nextMagicA/B,
finalizeHash, arrayHash, stringHash) and ConsistentHash.scala (claim,
concatenateNodeHash, nodeFor with Arrays.binarySearch and idx, the lowest
toString owning a shared position).  Each function below follows its Scala
one line for line; Java's Int arithmetic is emulated (i32 wraps, urs is
>>>), and the ring is Pekko's signed SortedMap[Int, T].

java_utf8() is how Java's new String(bytes, UTF_8) decodes; it, with
stringHash, was compared once with OpenJDK 17 (a Java copy of these
functions over real Java Strings) for every sequence of 1 to 4 bytes drawn
from 25 byte values at the UTF-8 boundaries (406900 inputs, no
difference), and every vector below with the same Java copy.

Run it to print the C header tests/unit/dataplane/pekko_vectors.h; the
unit suite runs it again and compares (test 'pekko_vectors_current').

    python3 tests/unit/dataplane/pekko_vectors.py > tests/unit/dataplane/pekko_vectors.h
"""
import bisect
import sys


def i32(x):
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x & 0x80000000 else x


def urs(x, n):  # x >>> n on an Int
    return (x & 0xFFFFFFFF) >> n


def rotl(x, r):  # java.lang.Integer.rotateLeft
    x &= 0xFFFFFFFF
    return i32((x << r) | (x >> (32 - r)))


# MurmurHash.scala
visibleMagic = i32(0x971E137B)
hiddenMagicA = i32(0x95543787)
hiddenMagicB = i32(0x2AD7EB25)
visibleMixer = i32(0x52DCE729)
hiddenMixerA = i32(0x7B7D159C)
hiddenMixerB = i32(0x6BCE6396)
finalMixer1 = i32(0x85EBCA6B)
finalMixer2 = i32(0xC2B2AE35)
seedString = i32(0xF7CA7FD2)
seedArray = i32(0x3C074A61)


def startHash(seed):
    return i32(seed ^ visibleMagic)


def extendHash(hash, value, magicA, magicB):
    # (hash ^ rotl(value * magicA, 11) * magicB) * 3 + visibleMixer
    return i32((hash ^ i32(rotl(i32(value * magicA), 11) * magicB)) * 3
               + visibleMixer)


def nextMagicA(magicA):
    return i32(magicA * 5 + hiddenMixerA)


def nextMagicB(magicB):
    return i32(magicB * 5 + hiddenMixerB)


def finalizeHash(hash):
    i = i32(hash ^ urs(hash, 16))
    i = i32(i * finalMixer1)
    i = i32(i ^ urs(i, 13))
    i = i32(i * finalMixer2)
    i = i32(i ^ urs(i, 16))
    return i


def arrayHash(a):
    """arrayHash of an Array[Byte]: a(j).## is the byte, signed."""
    h = startHash(i32(len(a) * seedArray))
    c = hiddenMagicA
    k = hiddenMagicB
    j = 0
    while j < len(a):
        b = a[j] - 256 if a[j] > 127 else a[j]
        h = extendHash(h, b, c, k)
        c = nextMagicA(c)
        k = nextMagicB(k)
        j += 1
    return finalizeHash(h)


def chars(s):
    """A Python str as Java's charAt sees it: UTF-16 code units."""
    u = s.encode('utf-16-be')
    return [(u[i] << 8) | u[i + 1] for i in range(0, len(u), 2)]


def java_utf8(b):
    """The UTF-16 units of new String(b, StandardCharsets.UTF_8), OpenJDK
    17: a well-formed sequence gives its chars; an ill-formed one, its
    maximal subpart, gives one U+FFFD, except that Java takes ED A0..BF as
    a prefix and a whole encoded surrogate as one U+FFFD."""
    out, i = [], 0
    while i < len(b):
        x = b[i]
        if x < 0x80:
            out.append(x)
            i += 1
            continue
        if 0xC2 <= x <= 0xDF:
            need, cp, lo, hi = 1, x & 0x1F, 0x80, 0xBF
        elif 0xE0 <= x <= 0xEF:
            need, cp, lo, hi = 2, x & 0x0F, 0xA0 if x == 0xE0 else 0x80, 0xBF
        elif 0xF0 <= x <= 0xF4:
            need, cp = 3, x & 0x07
            lo = 0x90 if x == 0xF0 else 0x80
            hi = 0x8F if x == 0xF4 else 0xBF
        else:
            out.append(0xFFFD)
            i += 1
            continue
        j = 1
        while j <= need and i + j < len(b) and lo <= b[i + j] <= hi:
            cp = (cp << 6) | (b[i + j] & 0x3F)
            lo, hi = 0x80, 0xBF
            j += 1
        i += j
        if j <= need or 0xD800 <= cp <= 0xDFFF:
            out.append(0xFFFD)
        elif cp < 0x10000:
            out.append(cp)
        else:
            cp -= 0x10000
            out += [0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF)]
    return out


def stringHash(string):
    s = chars(string) if isinstance(string, str) else string
    h = startHash(i32(len(s) * seedString))
    c = hiddenMagicA
    k = hiddenMagicB
    j = 0
    while j + 1 < len(s):
        i = i32((s[j] << 16) + s[j + 1])
        h = extendHash(h, i, c, k)
        c = nextMagicA(c)
        k = nextMagicB(k)
        j += 2
    if j < len(s):
        h = extendHash(h, s[j], c, k)
    return finalizeHash(h)


# ConsistentHash.scala
def concatenateNodeHash(nodeHash, vnode):
    h = startHash(nodeHash)
    h = extendHash(h, vnode, hiddenMagicA, hiddenMagicB)
    return finalizeHash(h)


class ConsistentHash:
    def __init__(self, nodes, virtualNodesFactor):
        self.nodes = {}       # SortedMap[Int, T]: position -> owner
        self.collisions = {}  # position -> the other claimants
        self.factor = virtualNodesFactor
        for node in nodes:   # ConsistentHash.apply: foldLeft claim
            self.claim(node)
        self.nodeHashRing = sorted(self.nodes)  # signed Int order
        self.nodeRing = [self.nodes[h] for h in self.nodeHashRing]

    def claim(self, node):
        nodeHash = stringHash(node)  # hashFor(node.toString)
        for r in range(1, self.factor + 1):
            hash = concatenateNodeHash(nodeHash, r)
            others = [n for n in self.claimants(hash) if n != node]
            self.setClaimants(hash, [node] + others)

    def claimants(self, hash):
        if hash in self.nodes:
            return [self.nodes[hash]] + self.collisions.get(hash, [])
        return []

    def setClaimants(self, hash, claimants):
        if len(claimants) == 1:
            self.nodes[hash] = claimants[0]
            self.collisions.pop(hash, None)
        else:  # lowest toString owns the position (sortBy(_.toString))
            srt = sorted(claimants, key=chars)
            self.nodes[hash] = srt[0]
            self.collisions[hash] = srt[1:]

    def idx(self, i):
        # Arrays.binarySearch: the index, or -(insertion point) - 1
        if i >= 0:
            return i
        j = abs(i + 1)
        return 0 if j >= len(self.nodeHashRing) else j

    def binarySearch(self, key):
        p = bisect.bisect_left(self.nodeHashRing, key)
        if p < len(self.nodeHashRing) and self.nodeHashRing[p] == key:
            return p
        return -p - 1

    def nodeFor_bytes(self, key):
        return self.nodeRing[self.idx(self.binarySearch(arrayHash(key)))]

    def nodeFor_string(self, key):
        return self.nodeRing[self.idx(self.binarySearch(stringHash(key)))]


# ---- the vectors -----------------------------------------------------------

BYTES = [b'', b'a', b'ab', b'user-42', b'order-000123', b'\x00',
         b'\x7f\x80\xff', bytes(range(256))]
# stringHash's keys, as the UTF-8 bytes shmrouter hashes: ASCII, two-
# and three-byte sequences, a code point above U+FFFF (a surrogate pair),
# and ill-formed UTF-8 (java_utf8() says how Java decodes it).
STRINGS = [s.encode('utf-8') for s in [
    '', 'a', 'ab', 'abc', 'user-42',
    'pekko://orders@127.0.0.1:7355/user/workers/w0',
    'caf\u00e9', '\u6ce8\u6587-7', 'k\U0001f600', '\U0001f600']] + [
    b'\xe9', b'\xe2\x82A', b'\xf0\x80\x80', b'\xed\xa0\x80', b'\xc0\xaf',
    b'\xf0\x9f\x98', b'\xff', b'\xed\xa0', b'\xed\xbf\xbfA']
VNODES = [(0, 1), (-1, 10), (0x12345678, 7), (i32(0x80000000), 1024)]

# The integration test's router (tests/integration/test_hash_bytes.c).
RING_PREFIX = 'pekko://orders@127.0.0.1:7355/user/workers/'
RING_ROUTEES = ['w0', 'w1', 'w2', 'w3']
RING_VNODES = 10
RING_KEYS = ['user-%d' % i for i in range(48)]


def c_bytes(b):
    return '"' + ''.join('\\x%02x' % x for x in b) + '"'


def u32(x):
    return '0x%08xu' % (x & 0xFFFFFFFF)


def main():
    out = []
    w = out.append
    w('/* Generated by pekko_vectors.py (Pekko\'s ConsistentHash and')
    w(' * MurmurHash, followed line by line): do not edit; run the script. */')
    w('#ifndef SHMR_TEST_PEKKO_VECTORS_H')
    w('#define SHMR_TEST_PEKKO_VECTORS_H')
    w('#include <stddef.h>')
    w('#include <stdint.h>')
    w('')
    w('/* fn: \'a\' MurmurHash.arrayHash of an Array[Byte], \'s\' stringHash of')
    w(' * the String whose UTF-8 these bytes are */')
    w('struct pk_bytes_vec { char fn; const char *b; size_t n; uint32_t hash; };')
    w('struct pk_vnode_vec { uint32_t node, vnode, hash; };')
    w('struct pk_ring_vec { const char *key; int owner_bytes, owner_string; };')
    w('')
    w('static const struct pk_bytes_vec pk_hash_vecs[] = {')
    rows = [('a', b, arrayHash(b)) for b in BYTES]
    rows += [('s', b, stringHash(java_utf8(b))) for b in STRINGS]
    for fn, b, h in rows:
        w("\t{ '%s', %s, %d, %s }," % (fn, c_bytes(b), len(b), u32(h)))
    w('};')
    w('')
    w('/* ConsistentHash.concatenateNodeHash(node, vnode) */')
    w('static const struct pk_vnode_vec pk_vnode_vecs[] = {')
    for node, v in VNODES:
        w('\t{ %s, %d, %s },' % (u32(node), v,
                                  u32(concatenateNodeHash(node, v))))
    w('};')
    w('')
    nodes = [RING_PREFIX + r for r in RING_ROUTEES]
    ring = ConsistentHash(nodes, RING_VNODES)
    assert len(ring.nodes) == len(nodes) * RING_VNODES, 'a collision'
    w('/* ConsistentHash(%s, %d): the routee owning each key, as' %
      (', '.join('"<prefix>%s"' % r for r in RING_ROUTEES), RING_VNODES))
    w(' * nodeFor(key.getBytes(US_ASCII)) and as nodeFor(key) */')
    w('#define PK_RING_PREFIX "%s"' % RING_PREFIX)
    w('#define PK_RING_VNODES %d' % RING_VNODES)
    w('static const char *const pk_ring_routees[] = { %s };' %
      ', '.join('"%s"' % r for r in RING_ROUTEES))
    w('static const struct pk_ring_vec pk_ring_vecs[] = {')
    for k in RING_KEYS:
        ob = nodes.index(ring.nodeFor_bytes(k.encode('ascii')))
        os_ = nodes.index(ring.nodeFor_string(k))
        w('\t{ "%s", %d, %d },' % (k, ob, os_))
    w('};')
    w('')
    w('#endif')
    sys.stdout.write('\n'.join(out) + '\n')


if __name__ == '__main__':
    main()
