/**
 * ACLs on the authorizer test clusters. ACLs are cluster-wide state shared by every test and run: give each test
 * its own principals (`User:${uniqueName('acl')}`) and resource names, and remove what it created in `t.after`.
 */
import { AclOperations, AclPermissionTypes, ResourcePatternTypes, ResourceTypes, type Admin } from '@platformatic/kafka'
import { fromLibraryAcl, toLibraryAcl, type AclBinding } from '../../src/kafka/acls.ts'
import type { ClusterRef } from './clusters.ts'
import { withAdmin, type Cleanup } from './kafka-clients.ts'
import { waitFor } from './wait.ts'

/** Everything held by one principal: the filter of describe and delete. */
function principalFilter (principal: string) {
  return {
    resourceType: ResourceTypes.ANY,
    resourceName: null,
    resourcePatternType: ResourcePatternTypes.ANY,
    principal,
    host: null,
    operation: AclOperations.ANY,
    permissionType: AclPermissionTypes.ANY
  } as Parameters<Admin['deleteAcls']>[0]['filters'][number]
}

/**
 * Creates BINDINGS on the cluster; with `t`, registers first (so it runs even if creation fails) the deletion of
 * exactly these bindings. Copies made on other clusters are not covered: remove them with `deleteAclsOf` and the
 * test's own unique principals (never with a shared one such as User:alice).
 * Returns once the broker's authorizer holds them: KRaft commits an ACL on the controller and the broker applies it
 * when it replays the metadata log, so a request sent right after CreateAcls returns may still pass a new DENY
 * (seen in CI: six offset syncs written "while denied").
 */
export async function createAcls (ref: ClusterRef, bindings: readonly AclBinding[], t?: Cleanup): Promise<void> {
  t?.after(() => deleteAcls(ref, bindings))
  await withAdmin(ref, admin => admin.createAcls({ creations: bindings.map(toLibraryAcl) }))
  await untilApplied(ref, bindings, true)
}

/** Every ACL binding of the given principals (any resource, pattern, operation and host). */
export async function aclsOf (ref: ClusterRef, principals: readonly string[]): Promise<AclBinding[]> {
  return withAdmin(ref, async admin => {
    const out: AclBinding[] = []
    for (const principal of principals) {
      const resources = await admin.describeAcls({ filter: principalFilter(principal) })
      for (const resource of resources) {
        for (const entry of resource.acls) {
          const binding = fromLibraryAcl({ ...resource, ...entry })
          if (binding !== undefined) out.push(binding)
        }
      }
    }
    return out
  })
}

/** Deletes every ACL binding of the given principals. */
export async function deleteAclsOf (ref: ClusterRef, principals: readonly string[]): Promise<void> {
  if (principals.length === 0) return
  await withAdmin(ref, admin => admin.deleteAcls({ filters: principals.map(principalFilter) }))
}

/** Deletes exactly these bindings, and returns once the broker's authorizer no longer holds them. */
export async function deleteAcls (ref: ClusterRef, bindings: readonly AclBinding[]): Promise<void> {
  if (bindings.length === 0) return
  await withAdmin(ref, admin => admin.deleteAcls({ filters: bindings.map(toLibraryAcl) }))
  await untilApplied(ref, bindings, false)
}

const bindingKey = (b: AclBinding): string =>
  [b.resourceType, b.resourceName, b.patternType, b.principal, b.host, b.operation, b.permission].join('\u0000')

/**
 * Waits until DescribeAcls shows every binding (PRESENT) or none of them. The broker answers DescribeAcls from the
 * same authorizer that checks its Produce and Fetch requests, so what it shows is what it enforces; the test
 * clusters with an authorizer have a single broker.
 */
async function untilApplied (ref: ClusterRef, bindings: readonly AclBinding[], present: boolean): Promise<void> {
  const principals = [...new Set(bindings.map(b => b.principal))]
  await waitFor(async () => {
    const held = new Set((await aclsOf(ref, principals)).map(bindingKey))
    const missing = bindings.filter(b => held.has(bindingKey(b)) !== present)
    return { done: missing.length === 0, state: missing }
  }, { timeoutMs: 15_000, intervalMs: 50, message: `the broker's authorizer ${present ? 'holding' : 'rid of'} the ACLs` })
}
