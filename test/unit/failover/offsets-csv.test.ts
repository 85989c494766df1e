import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseOffsetsCsv, writeOffsetsCsv } from '../../../src/failover/offsets-csv.ts'
import { parseIsoDuration } from '../../../src/failover/iso-duration.ts'

describe('the kafka-consumer-groups.sh reset CSV', () => {
  it('writes topic,partition,offset for one group and group,topic,partition,offset for several, without a header', () => {
    const rows = [{ group: 'billing', topic: 'orders', partition: 0, offset: 42 }, { group: 'billing', topic: 'orders', partition: 1, offset: 7 }]
    assert.equal(writeOffsetsCsv(rows, false), 'orders,0,42\norders,1,7\n')
    assert.equal(writeOffsetsCsv(rows, true), 'billing,orders,0,42\nbilling,orders,1,7\n')
  })

  it('quotes a group holding a comma or a quote, and reads it back', () => {
    const rows = [{ group: 'team "a", eu', topic: 'orders', partition: 3, offset: 9 }]
    const text = writeOffsetsCsv(rows, true)
    assert.equal(text, '"team ""a"", eu",orders,3,9\n')
    assert.deepEqual(parseOffsetsCsv(text, 'f.csv'), rows)
  })

  it('reads both forms, CRLF line ends and blank lines (Kafka prints a trailing one)', () => {
    assert.deepEqual(parseOffsetsCsv('orders,0,42\r\norders,1,7\r\n\n', 'f.csv'), [{ topic: 'orders', partition: 0, offset: 42 }, { topic: 'orders', partition: 1, offset: 7 }])
    assert.deepEqual(parseOffsetsCsv('g,orders,0,42\n', 'f.csv'), [{ group: 'g', topic: 'orders', partition: 0, offset: 42 }])
  })

  it('names the line and what is wrong', () => {
    assert.throws(() => parseOffsetsCsv('orders,0,42\norders,x,1\n', 'f.csv'), /^Error: f\.csv line 2: partition 'x' is not a whole number 0 or more$/)
    assert.throws(() => parseOffsetsCsv('orders,0,-1\n', 'f.csv'), /f\.csv line 1: offset '-1' is not a whole number 0 or more/)
    assert.throws(() => parseOffsetsCsv('orders,0\n', 'f.csv'), /f\.csv line 1: expected topic,partition,offset or group,topic,partition,offset, got 2 field\(s\)/)
    assert.throws(() => parseOffsetsCsv('orders,0,1\ng,orders,1,1\n', 'f.csv'), /f\.csv line 2: 4 fields where the lines before have 3/)
    assert.throws(() => parseOffsetsCsv('\n\n', 'f.csv'), /f\.csv holds no offsets/)
  })

  it('refuses a partition set twice to different offsets, an empty group and text after a closing quote; a repeated identical line is one', () => {
    assert.throws(() => parseOffsetsCsv('orders,0,5\norders,1,1\norders,0,9\n', 'f.csv'), /^Error: f\.csv line 3: orders-0 is set to 9, and to 5 on line 1; keep one line per partition$/)
    assert.throws(() => parseOffsetsCsv('g,orders,0,5\ng,orders,0,6\n', 'f.csv'), /f\.csv line 2: group g orders-0 is set to 6, and to 5 on line 1/)
    assert.deepEqual(parseOffsetsCsv('g,orders,0,5\nh,orders,0,6\ng,orders,0,5\n', 'f.csv').length, 2)
    assert.throws(() => parseOffsetsCsv(',orders,0,5\n', 'f.csv'), /f\.csv line 1: the group is empty/)
    assert.throws(() => parseOffsetsCsv('ok,0,1\n"ord"x,0,1\n', 'f.csv'), /f\.csv line 2: text after the closing quote of "ord"; quote the whole field/)
    assert.deepEqual(parseOffsetsCsv('"a,b",0,1\n', 'f.csv'), [{ topic: 'a,b', partition: 0, offset: 1 }])
  })
})

describe('--by-duration', () => {
  it('reads java.time.Duration\'s PnDTnHnMnS', () => {
    assert.equal(parseIsoDuration('P1D'), 86_400_000)
    assert.equal(parseIsoDuration('PT1H30M'), 5_400_000)
    assert.equal(parseIsoDuration('PT0.5S'), 500)
    assert.equal(parseIsoDuration('P1DT2H'), 93_600_000)
    assert.equal(parseIsoDuration('pt15m'), 900_000)
  })

  it('refuses anything else, including negative and empty durations', () => {
    for (const bad of ['', 'P', 'PT', '1h', 'PT-5M', 'P1W', 'P1M', 'P1DT', '30m', 'PT1.5M']) assert.equal(parseIsoDuration(bad), null, bad)
  })
})
