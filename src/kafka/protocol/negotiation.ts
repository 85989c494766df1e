/**
 * Sends kmirror's own requests at the highest version both sides speak, per broker connection, as the Java client
 * does (NodeApiVersions.latestUsableVersion): the intersection of kmirror's range and the broker's, its maximum.
 *
 * Invariants:
 * - Every connection is asked ApiVersions once, before its first request; a new connection (after a reconnect, or
 *   to a broker upgraded meanwhile) is asked again. Brokers of one cluster may differ during a rolling upgrade.
 * - ApiVersions is first asked at v3; a broker that does not know v3 answers UNSUPPORTED_VERSION with its own
 *   range (Kafka 2.4+) or none (older), and is asked again at the highest version it named, else v0.
 * - No request is ever sent at a version the broker did not list: brokers close the connection without an answer
 *   on an unknown version, which would read as a network fault and be retried forever.
 * - An empty intersection is BROKER_INCOMPATIBLE (not retriable): the broker is older than kmirror's floor.
 */
import { TimeoutError, Writer, type Connection } from '@platformatic/kafka'
import { ErrorCodes, KmirrorError } from '../../errors.ts'
import { decodeResponse, encodeRequest, isFlexible, type ApiSpec } from './api.ts'
import { ApiVersionsApi, UNSUPPORTED_VERSION, type ApiVersionRange } from './api-versions.ts'
import { describeBrokerRelease } from './broker-release.ts'
import { packageVersion } from '../../version.ts'

/** kmirror's version, as brokers log it (ApiVersions v3's client software version). */
const CLIENT_SOFTWARE = { clientSoftwareName: 'kmirror', clientSoftwareVersion: packageVersion() }

/** What one broker offers: version ranges per API key. */
export class BrokerApis {
  readonly apis: ReadonlyMap<number, ApiVersionRange>
  readonly address: string

  constructor (apis: ReadonlyMap<number, ApiVersionRange>, address: string) {
    this.apis = apis
    this.address = address
  }

  /** The version to send SPEC at (at most `cap`), or null when the broker offers none kmirror speaks. */
  versionFor (spec: ApiSpec<unknown, unknown>, cap = spec.maxVersion): number | null {
    const range = this.apis.get(spec.key)
    if (range === undefined) return null
    const version = Math.min(range.max, spec.maxVersion, cap)
    return version >= Math.max(range.min, spec.minVersion) ? version : null
  }

  /** E.g. "Kafka 3.5-3.6", for messages. */
  get release (): string {
    return describeBrokerRelease(this.apis)
  }

  /** BROKER_INCOMPATIBLE naming the broker, what it offers and kmirror's floor; `cluster` e.g. "cluster A". */
  incompatible (spec: ApiSpec<unknown, unknown>, cluster: string): KmirrorError {
    const range = this.apis.get(spec.key)
    const offers = range === undefined ? `offers no ${spec.name}` : `offers ${spec.name} v${range.min}-v${range.max}`
    return new KmirrorError(ErrorCodes.BROKER_INCOMPATIBLE,
      `${cluster} broker ${this.address} (looks like ${this.release}) ${offers}, kmirror needs v${spec.minVersion}-v${spec.maxVersion}: ` +
      'kmirror works with Apache Kafka 2.1 or newer (like the Java client and MirrorMaker 2 4.x). Upgrade the broker; a ' +
      'broker whose log.message.format.version is below 0.11 also hides these versions', { details: { broker: this.address, api: spec.name } })
  }
}

const negotiated = new WeakMap<Connection, Promise<BrokerApis>>()

/** The broker's API versions, asked once per connection. Network failures are not cached. */
export function brokerApis (connection: Connection): Promise<BrokerApis> {
  let pending = negotiated.get(connection)
  if (pending === undefined) {
    pending = askApiVersions(connection)
    negotiated.set(connection, pending)
    pending.catch(() => { if (negotiated.get(connection) === pending) negotiated.delete(connection) })
  }
  return pending
}

async function askApiVersions (connection: Connection): Promise<BrokerApis> {
  const address = `${connection.host}:${connection.port}`
  let answer = await sendAt(connection, ApiVersionsApi, ApiVersionsApi.maxVersion, CLIENT_SOFTWARE)
  if (answer.errorCode === UNSUPPORTED_VERSION) {
    const named = answer.apis.get(ApiVersionsApi.key)?.max ?? 0
    answer = await sendAt(connection, ApiVersionsApi, Math.min(named, ApiVersionsApi.maxVersion - 1), CLIENT_SOFTWARE)
  }
  if (answer.errorCode !== 0) {
    throw new KmirrorError(ErrorCodes.BROKER_INCOMPATIBLE, `broker ${address} refused ApiVersions with Kafka error code ${answer.errorCode}: it is not a Kafka broker kmirror can talk to`)
  }
  return new BrokerApis(answer.apis, address)
}

/**
 * Sends REQUEST at the highest version the connection's broker and kmirror both speak, and at most `maxVersion`
 * (a request whose content a newer version cannot carry, e.g. a Fetch of a topic without a topic id). `cluster`
 * names the cluster in messages ("cluster A").
 */
export async function sendRequest<Req, Res> (connection: Connection, spec: ApiSpec<Req, Res>, request: Req, cluster: string, maxVersion = spec.maxVersion, beforeWrite?: () => void): Promise<Res> {
  const apis = await brokerApis(connection)
  const version = apis.versionFor(spec, maxVersion)
  if (version === null) throw apis.incompatible(spec, cluster)
  try {
    return await sendAt(connection, spec, version, request, beforeWrite)
  } catch (err) {
    // A request kmirror cannot encode or an answer it cannot read is not a network fault: retrying cannot help.
    if (err instanceof RangeError) {
      throw new KmirrorError(ErrorCodes.INTERNAL, `${spec.name} v${version} with ${cluster} broker ${apis.address} (${apis.release}): ${err.message}; this is a bug in kmirror or a broker answering outside the protocol: please report it`, { cause: err })
    }
    throw err
  }
}

/**
 * One request at a fixed version (the caller made sure the broker speaks it). BEFORE_WRITE runs once the request is
 * encoded, in the same synchronous step in which the library writes it to the socket (unless more than its
 * `maxInflights` requests are outstanding on the connection): a gate asked there is asked as late as the library
 * allows. What it throws fails the request, which is then not sent.
 */
export function sendAt<Req, Res> (connection: Connection, spec: ApiSpec<Req, Res>, version: number, request: Req, beforeWrite?: () => void): Promise<Res> {
  const flexible = isFlexible(spec, version)
  return new Promise((resolve, reject) => {
    connection.send<Res>(
      spec.key,
      version,
      () => {
        const writer = Writer.create()
        for (const chunk of encodeRequest(spec, version, request)) writer.append(chunk)
        beforeWrite?.()
        return writer
      },
      (_correlationId, _apiKey, _apiVersion, reader) => decodeResponse(spec, version, reader.buffer.buffer, reader.position),
      flexible,
      flexible && spec.responseHeaderAlwaysV0 !== true,
      (error, response) => { if (error) reject(namingBroker(error, connection, spec, version)); else resolve(response as Res) }
    )
  })
}

/**
 * A request sent on an established connection and not answered within its timeout (never a connection attempt that
 * timed out): what makes a broker silent (kafka/silent-brokers.ts).
 */
export class RequestTimeout extends TimeoutError {}

/** A timeout of the library names neither the request nor the broker: the one raised here names both (cause kept). */
function namingBroker (error: Error, connection: Connection, spec: ApiSpec<unknown, unknown>, version: number): Error {
  if (!(error instanceof TimeoutError)) return error
  return new RequestTimeout(`${spec.name} v${version} request to broker ${connection.host}:${connection.port} timed out (${error.message})`, { cause: error, canRetry: true })
}
