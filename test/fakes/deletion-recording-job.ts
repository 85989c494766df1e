/**
 * The topic refresh job of a group member over a real RemoteTopics, with a data path and progress store that do
 * nothing and own nothing: what each run that was not aborted found deleted is recorded (`deleted`).
 */
import type { RemoteTopics } from '../../src/metadata/remote-topics.ts'
import { topicRefreshJob } from '../../src/runtime/topic-refresh-job.ts'
import { memoryLogger } from './memory-logger.ts'

export function deletionRecordingJob (topics: RemoteTopics): { run: (signal: AbortSignal) => Promise<void>, deleted: string[][] } {
  const deleted: string[][] = []
  const run = topicRefreshJob({
    topics,
    replicator: { removeTopics: async () => {}, addTopics: async () => {}, addPartitions: async () => {} },
    progress: { forget: async () => {}, load: async () => new Map(), topic: 'mm2-offsets.A.internal' },
    target: 'B',
    owns: () => false,
    alone: false,
    before: null,
    refreshed: r => { deleted.push([...r.deleted]) },
    log: memoryLogger().log
  })
  return { run, deleted }
}
