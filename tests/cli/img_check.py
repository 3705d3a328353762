#!/usr/bin/env python3
"""Checks of e2fragimg images against independent oracles (debugfs).

Used by tests/cli/img-*.sh.  Every subcommand exits 0 when the check
holds and 1 with a message on stderr when it does not.

  manifest IMG DUMPDIR      the manifest IMG.json against the files that
                            `debugfs -R "rdump / DUMPDIR"` wrote: same set
                            of regular files, sizes and SHA-256; inode
                            numbers against debugfs ncheck; sets coherent
  interleaved IMG PATH...   the files' data blocks alternate physically
                            (written in turns, one block at a time)
  separate IMG PATH...      each file lies in one piece, the files one
                            after another: no alternation
  indirect IMG PATH...      each block-mapped file's IND block sits right
                            before its data block 12 (and DIND before IND
                            before block 12+apb)
  pieces IMG [PATH...]      print the most pieces any of the files (by
                            default every file of the manifest) is in
  alternate IMG GROUPBLOCKS MIN
                            at least MIN files of the manifest each have
                            blocks (data and indirect, per debugfs stat)
                            alternating with another file's in one group
                            of GROUPBLOCKS blocks: A..B..A..B
"""
import hashlib
import json
import os
import re
import subprocess
import sys

DATA = re.compile(r'\((\d+)(?:-(\d+))?\):(\d+)(?:-(\d+))?')
META = re.compile(r'\((IND|DIND|TIND|ETB\d+)\):(\d+)')


def fail(msg):
    sys.stderr.write('img_check: ' + msg + '\n')
    sys.exit(1)


def debugfs(img, request):
    out = subprocess.run(['debugfs', '-R', request, img], capture_output=True,
                         text=True, check=False)
    if out.returncode != 0:
        fail('debugfs -R "%s" %s failed: %s' % (request, img, out.stderr))
    return out.stdout


def stat_all(img, paths):
    """debugfs stat of every path, in one debugfs run: {path: text}."""
    cmds = ''.join('stat "%s"\n' % p for p in paths)
    out = subprocess.run(['debugfs', '-f', '-', img], input=cmds,
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        fail('debugfs -f - %s failed: %s' % (img, out.stderr))
    texts, cur = {}, None
    for line in out.stdout.splitlines(keepends=True):
        m = re.match(r'^debugfs: stat "(.*)"$', line.rstrip('\n'))
        if m:
            cur = m.group(1)
            texts[cur] = ''
        elif cur is not None:
            texts[cur] += line
    missing = [p for p in paths if p not in texts]
    if missing:
        fail('debugfs did not stat %s' % missing[:3])
    return texts


def parse_map(path, text):
    """(data, meta): data[lblk] = pblk in logical order; meta = [(kind, pblk,
    at)] in the order debugfs stat lists them, AT the index into data of
    the data block listed right after it."""
    m = re.search(r'^(BLOCKS|EXTENTS):\n(.*?)(?:^TOTAL:|\Z)', text, re.S | re.M)
    if not m:
        return [], []
    data, meta = [], []
    for tok in m.group(2).replace('\n', ' ').split(', '):
        tok = tok.strip()
        mm = META.fullmatch(tok)
        if mm:
            meta.append((mm.group(1), int(mm.group(2)), len(data)))
            continue
        md = DATA.fullmatch(tok)
        if not md:
            if tok:
                fail('cannot parse "%s" in debugfs stat %s' % (tok, path))
            continue
        l0 = int(md.group(1))
        l1 = int(md.group(2) or l0)
        p0 = int(md.group(3))
        if l0 != len(data):
            fail('%s: hole or disorder at logical block %d' % (path, l0))
        data.extend(range(p0, p0 + l1 - l0 + 1))
    return data, meta


def block_maps(img, paths):
    texts = stat_all(img, paths)
    return {p: parse_map(p, texts[p]) for p in paths}


def stream_of(data, meta):
    """The blocks a sequential read touches, in order: data with the
    indirect blocks where the block iterator visits them (doc/design.md's
    piece); extent tree blocks are left out."""
    out, j = [], 0
    for kind, b, at in meta:
        if kind.startswith('ETB'):
            continue
        out.extend(data[j:at])
        j = at
        out.append(b)
    out.extend(data[j:])
    return out


def pieces(blocks):
    return sum(1 for i, b in enumerate(blocks) if i == 0 or b != blocks[i - 1] + 1)


def check_manifest(img, dump):
    with open(img + '.json') as f:
        man = json.load(f)
    files = man['files']
    paths = [e['path'] for e in files]
    if paths != sorted(paths, key=lambda p: p.encode()):
        fail('manifest files are not in path order')
    if len(set(paths)) != len(paths):
        fail('manifest lists a path twice')
    on_disk = set()
    for root, _dirs, names in os.walk(dump):
        for n in names:
            full = os.path.join(root, n)
            rel = '/' + os.path.relpath(full, dump)
            if not rel.startswith('/lost+found/'):
                on_disk.add(rel)
    if on_disk != set(paths):
        fail('files on the image and in the manifest differ: only on image %s, '
             'only in manifest %s' % (sorted(on_disk - set(paths))[:5],
                                      sorted(set(paths) - on_disk)[:5]))
    for e in files:
        with open(os.path.join(dump, e['path'][1:]), 'rb') as f:
            content = f.read()
        if len(content) != e['size']:
            fail('%s: %d bytes on the image, manifest says %d' %
                 (e['path'], len(content), e['size']))
        if hashlib.sha256(content).hexdigest() != e['sha256']:
            fail('%s: sha256 differs from the manifest' % e['path'])
    # Inode numbers, by debugfs' own name lookup (chunks keep argv short).
    names = {}
    for i in range(0, len(files), 500):
        out = debugfs(img, 'ncheck ' + ' '.join(str(e['ino']) for e in files[i:i + 500]))
        for line in out.splitlines()[1:]:
            ino, _, name = line.partition('\t')
            names[int(ino)] = re.sub('^/+', '/', name)
    for e in files:
        if names.get(e['ino']) != e['path']:
            fail('%s: inode %d is named %s by debugfs' %
                 (e['path'], e['ino'], names.get(e['ino'])))
    sets = man['sets']
    for i, s in enumerate(sets):
        if len(s) < 2 or s != sorted(s):
            fail('set %d has fewer than two files or is not sorted' % i)
    index = {p: i for i, s in enumerate(sets) for p in s}
    if sum(len(s) for s in sets) != len(index):
        fail('a file is in two sets')
    for e in files:
        if index.get(e['path']) != e['set']:
            fail('%s: "set" is %s but the sets put it in %s' %
                 (e['path'], e['set'], index.get(e['path'])))


def streams(img, paths):
    maps = block_maps(img, paths)
    return {p: stream_of(*maps[p]) for p in paths}


def owners_in_order(img, paths):
    owner = {}
    blocks = streams(img, paths)
    for i, p in enumerate(paths):
        data = blocks[p]
        if not data:
            fail('%s has no data blocks' % p)
        for b in data:
            owner[b] = i
    return [owner[b] for b in sorted(owner)]


def check_interleaved(img, paths):
    seq = owners_in_order(img, paths)
    changes = sum(1 for a, b in zip(seq, seq[1:]) if a != b)
    # Written in turns one block at a time: nearly every neighbour differs.
    if changes < 0.9 * (len(seq) - 1):
        fail('only %d owner changes among %d blocks: not interleaved' %
             (changes, len(seq)))
    print('interleaved: %d blocks, %d owner changes' % (len(seq), changes))


def check_separate(img, paths):
    blocks = streams(img, paths)
    for p in paths:
        if pieces(blocks[p]) > 1:
            fail('%s is in %d pieces' % (p, pieces(blocks[p])))
    seq = owners_in_order(img, paths)
    changes = sum(1 for a, b in zip(seq, seq[1:]) if a != b)
    if changes != len(paths) - 1:
        fail('%d owner changes among %d files: they alternate' %
             (changes, len(paths)))
    print('separate: %d blocks in %d runs' % (len(seq), changes + 1))


def check_indirect(img, paths, apb):
    maps = block_maps(img, paths)
    for p in paths:
        data, meta = maps[p]
        kinds = [(k, b, at) for k, b, at in meta]
        if len(data) <= 12:
            fail('%s is too small to need an indirect block' % p)
        ind = [(b, at) for k, b, at in kinds if k == 'IND']
        if not ind or ind[0][1] != 12 or data[12] != ind[0][0] + 1:
            fail('%s: first IND %s is not right before data block 12 (%d)' %
                 (p, ind[:1], data[12]))
        if len(data) > 12 + apb:
            dind = [(b, at) for k, b, at in kinds if k == 'DIND']
            second = [x for x in ind if x[1] == 12 + apb]
            if not dind or not second or \
               not dind[0][0] + 1 == second[0][0] == data[12 + apb] - 1:
                fail('%s: DIND, IND and data block %d are not consecutive' %
                     (p, 12 + apb))
    print('indirect blocks precede their first data block')


def alternations(a, b):
    """Owner changes in the physical order of the blocks of A and B."""
    seq = sorted([(x, 0) for x in a] + [(x, 1) for x in b])
    return sum(1 for u, v in zip(seq, seq[1:]) if u[1] != v[1])


def check_alternate(img, per_group, least):
    with open(img + '.json') as f:
        paths = [e['path'] for e in json.load(f)['files'] if e['size']]
    blocks = streams(img, paths)
    owner = {}
    for p in paths:
        for b in blocks[p]:
            owner[b] = p
    # Candidate pairs: files whose blocks are next to each other somewhere.
    order = sorted(owner)
    pairs = set()
    for x, y in zip(order, order[1:]):
        if owner[x] != owner[y] and x // per_group == y // per_group:
            pairs.add(tuple(sorted((owner[x], owner[y]))))
    found = set()
    for a, b in pairs:
        for g in {x // per_group for x in blocks[a]} & {x // per_group for x in blocks[b]}:
            if alternations([x for x in blocks[a] if x // per_group == g],
                            [x for x in blocks[b] if x // per_group == g]) >= 3:
                found.update((a, b))
                break
    if len(found) < least:
        fail('only %d files alternate with another (want %d)' % (len(found), least))
    print('%d files alternate with another in one group' % len(found))


def main(argv):
    if len(argv) < 3:
        fail('usage: img_check.py COMMAND IMG ARGS...')
    cmd, img, rest = argv[1], argv[2], argv[3:]
    if cmd == 'alternate':
        return check_alternate(img, int(rest[0]), int(rest[1]))
    if cmd == 'manifest':
        check_manifest(img, rest[0])
    elif cmd == 'interleaved':
        check_interleaved(img, rest)
    elif cmd == 'separate':
        check_separate(img, rest)
    elif cmd == 'indirect':
        check_indirect(img, rest[1:], int(rest[0]))
    elif cmd == 'pieces':
        if not rest:
            with open(img + '.json') as f:
                rest = [e['path'] for e in json.load(f)['files']]
        blocks = streams(img, rest)
        print(max(pieces(blocks[p]) for p in rest))
    else:
        fail('unknown command ' + cmd)


if __name__ == '__main__':
    main(sys.argv)
