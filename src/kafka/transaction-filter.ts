/**
 * Which fetched record batches hold records to copy: the read_committed filter of the Java consumer, as a pure
 * function of the fetched batches and the response's aborted-transaction list.
 *
 * Invariants:
 * - A transactional batch is dropped when its producer has an aborted transaction that started at or before the
 *   batch's last offset, until that producer's abort marker (a control batch) is passed; the abort marker found in
 *   the same response is never the only evidence (a response may end before the marker).
 * - Control batches are never returned; batches wholly before `fromOffset` and empty ones neither.
 * - `nextOffset` is one past the last offset of the last batch seen (control and aborted ones included), so they
 *   are not read again; `fromOffset` when no batch reaches it.
 *
 * Worked example: aborted [{ producerId 7, firstOffset 10 }], batches 8..9 (producer 7), 10..12 (producer 7,
 * transactional), 13 (abort marker of 7), 14..15 (producer 7, transactional): 8..9 and 14..15 are kept (the first
 * is before the transaction, the last after its marker), 10..12 and 13 dropped; nextOffset 16.
 */
import { BatchAttributes, isAbortMarker, type SourceBatch } from './record-batch.ts'

export interface AbortedTransaction {
  readonly producerId: bigint
  readonly firstOffset: number
}

/** `aborted` null: read_uncommitted (only control batches, empty ones and those before `fromOffset` are dropped). */
export function selectCommitted (batches: readonly SourceBatch[], fromOffset: number, aborted: readonly AbortedTransaction[] | null): { batches: SourceBatch[], nextOffset: number } {
  const pending = [...(aborted ?? [])].sort((a, b) => a.firstOffset - b.firstOffset)
  const abortedProducers = new Set<bigint>()
  const kept: SourceBatch[] = []
  let next = 0
  let nextOffset = fromOffset
  for (const batch of batches) {
    if (batch.lastOffset < fromOffset) continue
    nextOffset = batch.lastOffset + 1
    while (next < pending.length && pending[next]!.firstOffset <= batch.lastOffset) abortedProducers.add(pending[next++]!.producerId)
    if ((batch.attributes & BatchAttributes.CONTROL) !== 0) {
      if (isAbortMarker(batch)) abortedProducers.delete(batch.producerId)
      continue
    }
    if ((batch.attributes & BatchAttributes.TRANSACTIONAL) !== 0 && abortedProducers.has(batch.producerId)) continue
    if (batch.recordCount === 0) continue
    kept.push(batch)
  }
  return { batches: kept, nextOffset }
}
