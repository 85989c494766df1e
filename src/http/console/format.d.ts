// Types of format.js (the console's browser modules are plain JavaScript served as they are).
export function formatCount (n: number | null | undefined): string
export function formatBytes (n: number | null | undefined): string
export function formatRate (n: number | null | undefined): string
export function formatByteRate (n: number | null | undefined): string
export function formatSeconds (s: number | null | undefined): string
export function formatAgo (iso: string | null | undefined, nowMs: number): string
export function formatPartition (topic: string, partition: number): string
export function stateClass (state: string): string
export function headerState (doc: { healthy: boolean, error: string | null, stalled: readonly unknown[], ready: boolean, flows: readonly { state: string }[] }): string
export function formatHeldRead (read: { topic: string, cluster: string, partitions: ReadonlyArray<{ partition: number, offset: number }>, since: string, timeoutMs: number }, nowMs: number): string
