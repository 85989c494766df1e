/** The configuration module's public API. */
export { describeConfig, loadConfig, parseConfig, redactValue, selectFlows } from './load.ts'
export type { ClientProps, ClusterClientConfig, FlowConfig, KmirrorConfig, ReplicationPolicyConfig } from './types.ts'
