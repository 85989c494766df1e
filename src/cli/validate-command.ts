import { describeConfig } from '../config/load.ts'
import { ExitCodes } from '../errors.ts'
import { loadInput, loadSelectedFlows } from './config-input.ts'

/** `kmirror validate`: resolves and checks the file, prints the result with secrets redacted. */
export function validateCommand (file: string, clusters: string[] | undefined): number {
  const input = loadInput(() => loadSelectedFlows(file, clusters))
  if (!input.ok) return input.exitCode
  process.stdout.write(describeConfig(input.value.config, input.value.flows))
  return ExitCodes.OK
}
