/** Shared helpers for the config tests: inline mm2.properties fixtures and error capture. */
import assert from 'node:assert/strict'
import { ConfigError, type ConfigProblem } from '../../../src/errors.ts'
import { parseConfig } from '../../../src/config/load.ts'
import type { FlowConfig, KmirrorConfig } from '../../../src/config/types.ts'

/** Two reachable clusters and A->B on: the smallest valid configuration. Extra lines are appended. */
export function twoClusters (...lines: string[]): string {
  return ['clusters = A, B', 'A.bootstrap.servers = a1:9092, a2:9092', 'B.bootstrap.servers = b1:9092', 'A->B.enabled = true', ...lines].join('\n')
}

export function parse (text: string): KmirrorConfig {
  return parseConfig(text, 'mm2.properties')
}

export function flowOf (config: KmirrorConfig, name: string): FlowConfig {
  const flow = config.flows.find(f => f.name === name)
  assert.ok(flow, `flow ${name} exists`)
  return flow
}

/** Parses `text`, which must fail, and returns every problem reported. */
export function problemsOf (text: string): readonly ConfigProblem[] {
  try {
    parseConfig(text, 'mm2.properties')
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${String(err)}`)
    return err.problems
  }
  assert.fail('expected the configuration to be rejected')
}

/** The one problem reported for `key`; fails when there is none or several. */
export function problemFor (problems: readonly ConfigProblem[], key: string): ConfigProblem {
  const found = problems.filter(p => p.key === key)
  assert.equal(found.length, 1, `one problem for ${key} in ${JSON.stringify(problems, null, 2)}`)
  return found[0] as ConfigProblem
}

export function warningsFor (config: KmirrorConfig, key: string): string[] {
  return config.warnings.filter(w => w.key === key).map(w => w.message)
}
