/**
 * kmirror's own principals, for the ACL rule that never copies a DENY onto kmirror itself (principalOf and
 * describePrincipal live in src/kafka/principal.ts, where refused requests name the grant they need).
 */
import type { FlowConfig } from '../config/types.ts'
import { principalOf } from '../kafka/principal.ts'

export { describePrincipal, principalOf } from '../kafka/principal.ts'

/** Every principal kmirror's target clients (producer, admin) use, as far as the configuration tells. */
export function targetPrincipals (flow: FlowConfig): Set<string> {
  const out = new Set<string>()
  for (const props of [flow.target.producer, flow.target.admin]) {
    const principal = principalOf(props)
    if (principal !== null) out.add(principal)
  }
  return out
}
