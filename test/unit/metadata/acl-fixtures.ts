/** Shared helpers of the ACL sync tests: a flow from inline properties, bindings in one line, a plan in one call. */
import assert from 'node:assert/strict'
import { parseConfig } from '../../../src/config/load.ts'
import type { FlowConfig } from '../../../src/config/types.ts'
import type { AclBinding } from '../../../src/kafka/acls.ts'
import { planAclSync, type AclSyncPlan } from '../../../src/metadata/acl-sync.ts'
import { createReplicationPolicy } from '../../../src/policy/replication-policy.ts'

/** Flow A->B of a configuration with A and B on SASL/PLAIN as `admin`, plus the given lines. */
export function flowWith (...lines: string[]): FlowConfig {
  const sasl = (alias: string): string[] => [
    `${alias}.security.protocol = SASL_PLAINTEXT`,
    `${alias}.sasl.mechanism = PLAIN`,
    `${alias}.sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret";`
  ]
  const text = ['clusters = A, B', 'A.bootstrap.servers = a:9092', 'B.bootstrap.servers = b:9092', 'A->B.enabled = true', ...sasl('A'), ...sasl('B'), ...lines].join('\n')
  const flow = parseConfig(text, 'mm2.properties').flows.find(f => f.name === 'A->B')
  assert.ok(flow)
  return flow
}

/**
 * A binding from a short spec: `allow read topic orders User:alice`, optionally `prefixed` after the name and
 * `host=<h>` at the end. Operations use kmirror's words (`describe-configs`, `all`, ...).
 */
export function acl (spec: string): AclBinding {
  const words = spec.split(/\s+/)
  const [permission, operation, resourceType, resourceName] = words as [AclBinding['permission'], AclBinding['operation'], AclBinding['resourceType'], string]
  const rest = words.slice(4)
  const prefixed = rest[0] === 'prefixed'
  if (prefixed) rest.shift()
  const principal = rest.shift() ?? 'User:alice'
  const host = rest[0]?.startsWith('host=') === true ? rest[0].slice(5) : '*'
  return { resourceType, resourceName, patternType: prefixed ? 'prefixed' : 'literal', principal, host, operation, permission }
}

export interface PlanOptions {
  readonly target?: readonly AclBinding[] | null
  readonly sourceTopics?: readonly string[]
  readonly flow?: FlowConfig
  /** Target bindings the flow created earlier. */
  readonly owned?: readonly AclBinding[]
}

export function plan (source: readonly AclBinding[] | null, { target = [], sourceTopics = [], flow = flowWith(), owned = [] }: PlanOptions = {}): AclSyncPlan {
  return planAclSync({ sourceAcls: source, targetAcls: target, sourceTopics, flow, policy: createReplicationPolicy(flow.replicationPolicy), owned })
}

/** The one outcome of planning a single source binding: the created binding, or the skip reason. */
export function outcome (binding: AclBinding, options: PlanOptions = {}): AclBinding | string {
  const result = plan([binding], options)
  assert.equal(result.create.length + result.skipped.length + result.inSync, 1, JSON.stringify(result))
  return result.create[0] ?? result.skipped[0]?.reason ?? 'in sync'
}
