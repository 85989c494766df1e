import { describeConfig, loadConfig, selectFlows } from '../config/load.ts'
import { ConfigError, ExitCodes } from '../errors.ts'

/** `kmirror validate`: resolves and checks the file, prints the result with secrets redacted. */
export function validateCommand (file: string, clusters: string[] | undefined): number {
  try {
    const config = loadConfig(file)
    const flows = selectFlows(config, clusters)
    process.stdout.write(describeConfig(config, flows))
    return ExitCodes.OK
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`kmirror: ${err.message}\n`)
      return ExitCodes.BAD_INPUT
    }
    throw err
  }
}
