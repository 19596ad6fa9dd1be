/**
 * A legitimate pytest file that starts 64 threads, each allocating a little: it reserves far more
 * address space than it uses, which a per-process address-space limit mistakes for memory.
 */
export const THREAD_SUITE = [
  'import threading',
  '',
  'def test_many_threads_each_allocating():',
  '    barrier = threading.Barrier(64, timeout=20)',
  '    results = []',
  '    def work(i):',
  '        data = bytearray(256 * 1024)',
  '        data[0] = i % 256',
  '        barrier.wait()',
  '        results.append(data[0])',
  '    workers = [threading.Thread(target=work, args=(i,)) for i in range(64)]',
  '    for t in workers:',
  '        t.start()',
  '    for t in workers:',
  '        t.join()',
  '    assert len(results) == 64',
  '',
].join('\n');
