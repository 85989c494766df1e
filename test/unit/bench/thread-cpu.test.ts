import assert from 'node:assert/strict'
import { test } from 'node:test'
import { cpuBetween, formatCpu, threadKind, threadTicks } from '../../../bench/lib/thread-cpu.ts'

test('broker threads are told apart by name: JIT, GC, request handling (network threads and handlers), metadata, the rest', () => {
  assert.equal(threadKind('C2 CompilerThre'), 'JIT')
  assert.equal(threadKind('C1 CompilerThre'), 'JIT')
  assert.equal(threadKind('GC Thread#1'), 'GC')
  assert.equal(threadKind('G1 Refine#0'), 'GC')
  assert.equal(threadKind('data-plane-kafk'), 'requests', 'Kafka 4.x: network threads and handlers alike, cut at 15 characters')
  assert.equal(threadKind('kafka-request-h'), 'requests', 'handlers of older releases')
  assert.equal(threadKind('kafka-1-metadat'), 'metadata')
  assert.equal(threadKind('kafka-scheduler'), 'other')
})

test('the CPU between two readings counts each thread once, a thread started meanwhile from zero, largest kind first', () => {
  const before = new Map([['1', { kind: 'JIT', ticks: 100 }], ['2', { kind: 'requests', ticks: 50 }]])
  const after = new Map([['1', { kind: 'JIT', ticks: 350 }], ['2', { kind: 'requests', ticks: 60 }], ['3', { kind: 'JIT', ticks: 40 }], ['4', { kind: 'GC', ticks: 8 }]])
  const used = cpuBetween(before, after)
  assert.ok(used !== null)
  assert.deepEqual(used.byKind.map(([kind]) => kind), ['JIT', 'requests', 'GC'])
  assert.deepEqual(used.byKind.map(([, s]) => Math.round(s * 100)), [290, 10, 8])
  assert.equal(Math.round(used.total * 100), 308)
  assert.equal(formatCpu(used), '3.1 s (JIT 2.9, requests 0.1)', 'kinds under 0.1 s left out')
  assert.equal(cpuBetween(before, new Map()), null, 'a process that cannot be read is no figure')
  assert.equal(cpuBetween(new Map(), after), null, 'nor one not read before: its whole life is not the step\'s')
  assert.equal(formatCpu({ total: 0.05, byKind: [['JIT', 0.05]] }), '0.1 s', 'no kind worth naming: no empty list')
})

test('this process\'s threads can be read, and an unknown pid reads as nothing', () => {
  const mine = threadTicks(process.pid)
  assert.ok(mine.size >= 1)
  assert.ok([...mine.values()].every(t => Number.isInteger(t.ticks) && t.ticks >= 0))
  assert.equal(threadTicks(undefined).size, 0)
  assert.equal(threadTicks(2 ** 22 + 1).size, 0)
})
