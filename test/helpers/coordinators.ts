/**
 * Where the three-node `trio` coordinates a group or a transactional id, asked of a node that is up (tests that
 * kill or freeze brokers of the trio).
 */
import assert from 'node:assert/strict'
import { ConnectionPool } from '@platformatic/kafka'
import { CoordinatorKeyTypes, findCoordinator, type CoordinatorKeyType } from '../../src/kafka/protocol/find-coordinator.ts'
import { trioNode } from './clusters.ts'
import { waitFor } from './wait.ts'

/**
 * The node id of the broker coordinating KEY (a group, or a transactional id) on the trio, asked of node VIA (one
 * that is up), or without VIA of the first node that answers (a node another test just restarted may not listen yet).
 */
export async function coordinatorOf (key: string, via?: number, type: CoordinatorKeyType = CoordinatorKeyTypes.GROUP): Promise<{ nodeId: number, address: string }> {
  if (via !== undefined) return await askCoordinator(key, via, type)
  const errors: unknown[] = []
  for (const node of [1, 2, 3]) {
    try {
      return await askCoordinator(key, node, type)
    } catch (err) {
      errors.push(err)
    }
  }
  throw new AggregateError(errors, `no trio node told the coordinator of ${key}`)
}

async function askCoordinator (key: string, via: number, type: CoordinatorKeyType): Promise<{ nodeId: number, address: string }> {
  const pool = new ConnectionPool('kmirror-test', { connectTimeout: 5000, requestTimeout: 10_000 })
  try {
    const [host, port] = trioNode(via).split(':') as [string, string]
    const [found] = await findCoordinator(await pool.get({ host, port: Number(port) }), type, [key], 'cluster trio')
    assert.equal(found!.errorCode, 0)
    return { nodeId: found!.nodeId, address: `${found!.host}:${found!.port}` }
  } finally {
    await pool.close()
  }
}

/** The coordinator of KEY once it is another node than DEAD (the controller fences the dead broker in ~3 s). */
export async function coordinatorOfOther (key: string, dead: number, type: CoordinatorKeyType = CoordinatorKeyTypes.GROUP): Promise<{ nodeId: number, address: string }> {
  let found = { nodeId: dead, address: '' }
  await waitFor(async () => {
    found = await coordinatorOf(key, dead === 1 ? 2 : 1, type).catch(() => ({ nodeId: dead, address: '' }))
    return { done: found.nodeId !== dead, state: found }
  }, { timeoutMs: 30_000, intervalMs: 250, message: `${key} coordinated by a node other than ${dead}` })
  return found
}
