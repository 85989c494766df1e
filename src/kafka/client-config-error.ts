/**
 * A client setting kmirror cannot use (a keystore that does not open, a SASL option missing, ...). `key` is the
 * client key to fix, without the cluster prefix (`ssl.keystore.password`); the message never holds a secret.
 */
import { ErrorCodes, KmirrorError } from '../errors.ts'

export class ClientConfigError extends KmirrorError {
  readonly key: string

  constructor (key: string, message: string, cause?: unknown) {
    super(ErrorCodes.CONFIG_INVALID, `${key} ${message}`, cause === undefined ? {} : { cause })
    this.name = 'ClientConfigError'
    this.key = key
  }

  /** The message without the leading key (and `= `), for a ConfigProblem that names the key itself. */
  get problem (): string {
    return this.message.slice(this.key.length + 1).replace(/^= /, '')
  }
}
