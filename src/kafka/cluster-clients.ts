/**
 * The one way every command opens the clients of a cluster: each client built from the right role's properties
 * (admin, consumer, producer), with one naming scheme for client ids (`kmirror|<owner>|<role>`, what broker logs
 * and quotas see), the cluster named the same way in every message (`cluster <alias>`) and its keys in every
 * hint (`<alias>.bootstrap.servers`, from each client's ClusterContext), and all of them closed together, within a
 * deadline (a client of a cluster that stopped answering can wait on its connections).
 *
 * Clients are opened on first use: a command that only reads offsets never opens a producer.
 */
import { resolveAfter } from '../deadline.ts'
import type { ClientProps, ClusterClientConfig } from '../config/types.ts'
import { AdminClient } from './admin-client.ts'
import { BatchWriter, type BatchWriterOptions } from './batch-writer.ts'
import { checkBrokers, type BrokerRelease } from './broker-check.ts'
import { clusterContext, type ClusterContext } from './connection-hints.ts'
import { OffsetLookup } from './offset-lookup.ts'
import type { OpenTransactions } from './open-transactions.ts'
import { knowCluster } from './quota-throttles.ts'
import { RecordFetcher, type RecordFetcherOptions } from './record-fetcher.ts'
import { RecordWriter, type RecordWriterOptions } from './record-writer.ts'
import type { WaitReporter } from './transaction-waits.ts'

/**
 * How kmirror reads its internal topics (progress, history, offset syncs, checkpoints): committed data, no long
 * waits, and answers of at most 8 MiB. A command's requests may get only 10 s (a third of `--timeout`,
 * client-options.ts): 8 MiB arrive in that time over a 7 Mbit/s link to a distant cluster, 50 MiB (Kafka's
 * default) would need 40 Mbit/s. Reading a large internal topic takes more rounds instead, each a few milliseconds
 * on a local network.
 */
export const INTERNAL_READER_OPTIONS: RecordFetcherOptions = Object.freeze({
  isolation: 'read_committed', maxWaitMs: 100, maxBytes: 8_388_608, maxPartitionBytes: 1_048_576
})

/** `offsets set` reads no records: read_uncommitted, so `latest` is the high watermark. */
const LOOKUP_OPTIONS: RecordFetcherOptions = Object.freeze({
  isolation: 'read_uncommitted', maxWaitMs: 100, maxBytes: 1_048_576, maxPartitionBytes: 1_048_576
})

const CLOSE_DEADLINE_MS = 3000

/** Per `bootstrap.servers` as written: the brokers that answered a broker check (`checkBrokers`), in its order. */
const ANSWERING = new Map<string, string[]>()

function bootstrapOf (props: ClientProps): string {
  return (props['bootstrap.servers'] ?? '').split(',').map(s => s.trim()).filter(s => s.length > 0).join(',')
}

export class ClusterClients {
  readonly alias: string
  /** How messages name the cluster: `cluster <alias>`. */
  readonly label: string
  readonly #cluster: ClusterClientConfig
  readonly #owner: string
  readonly #side: string
  readonly #open: { close: () => Promise<void> }[] = []
  #admin: AdminClient | undefined
  #reader: RecordFetcher | undefined
  #lookup: OffsetLookup | undefined
  #check: Promise<BrokerRelease[]> | undefined

  /**
   * `owner` names who opens them (a flow `A->B`, a command `failover`); `side` prefixes the default clients' roles
   * (`source` → `source-admin`), the alias when not given.
   */
  constructor (cluster: ClusterClientConfig, owner: string, side: string = cluster.alias) {
    this.alias = cluster.alias
    this.label = `cluster ${cluster.alias}`
    this.#cluster = cluster
    this.#owner = owner
    this.#side = side
    // The remedy of a quota throttle names the cluster's brokers in its kafka-configs.sh lines (run as an admin).
    knowCluster(this.#context(cluster.admin))
  }

  clientId (role: string): string {
    return `kmirror|${this.#owner}|${role}`
  }

  get admin (): AdminClient {
    this.#admin ??= this.#track(new AdminClient(this.#props(this.#cluster.admin), this.clientId(`${this.#side}-admin`), this.#context(this.#cluster.admin)))
    return this.#admin
  }

  /** A reader of internal topics (INTERNAL_READER_OPTIONS). */
  get reader (): RecordFetcher {
    this.#reader ??= this.fetcher(`${this.#side}-reader`, INTERNAL_READER_OPTIONS)
    return this.#reader
  }

  /** Offsets by position or time (ListOffsets), for `offsets set`. */
  get lookup (): OffsetLookup {
    this.#lookup ??= new OffsetLookup(this.fetcher(`${this.#side}-lookup`, LOOKUP_OPTIONS))
    return this.#lookup
  }

  /** Another reader with its own options (the data path's, a status probe's), closed with the others. */
  fetcher (role: string, options: RecordFetcherOptions): RecordFetcher {
    return this.#track(new RecordFetcher(this.#props(this.#cluster.consumer), this.clientId(role), { ...options, cluster: this.#context(this.#cluster.consumer) }))
  }

  /** A writer of internal records (progress, history, offset syncs, heartbeats, checkpoints). */
  writer (role: string, options: RecordWriterOptions): RecordWriter {
    return this.#track(new RecordWriter(this.#props(this.#cluster.producer), this.clientId(role), { ...options, cluster: this.#context(this.#cluster.producer) }))
  }

  /** The data path's writer of record batches. */
  batchWriter (role: string, options: BatchWriterOptions): BatchWriter {
    return this.#track(new BatchWriter(this.#props(this.#cluster.producer), this.clientId(role), { ...options, cluster: this.#context(this.#cluster.producer) }))
  }

  /**
   * Fences every producer of these transactional ids (InitProducerId with each id and no producer id: epoch
   * bumped, open transaction aborted), as Kafka's Admin.fenceProducers. A refusal throws NOT_AUTHORIZED naming the
   * WRITE grant on the transactional id; a fenced id's owner then fails its next request with FENCED.
   */
  async fenceTransactionalIds (ids: readonly string[], onWaiting?: WaitReporter, transactions: Pick<BatchWriterOptions, 'transactionTimeoutMs' | 'transactionalIdPrefix'> = {}): Promise<void> {
    if (ids.length === 0) return
    const writer = this.batchWriter(`${this.#side}-fencer`, { maxInFlight: 1, maxRequestBytes: 1, timeoutMs: 30_000, ...transactions, ...(onWaiting === undefined ? {} : { onCoordinatorWaiting: onWaiting }) })
    try {
      await writer.fenceTransactionalIds(ids)
    } finally {
      await writer.close()
    }
  }

  /** The open transactions whose id starts with PREFIX, and what could not be looked at (open-transactions.ts); null when the cluster cannot list them. */
  async openTransactions (prefix: string): Promise<OpenTransactions | null> {
    const writer = this.batchWriter(`${this.#side}-transactions`, { maxInFlight: 1, maxRequestBytes: 1, timeoutMs: 30_000 })
    try {
      return await writer.openTransactions(prefix)
    } finally {
      await writer.close()
    }
  }

  /**
   * Every broker of the cluster speaks what kmirror needs (Kafka 2.1+): BROKER_INCOMPATIBLE otherwise, or the
   * connection error of an unreachable cluster. Asked once; a failure is asked again next time.
   */
  async checkBrokers (): Promise<BrokerRelease[]> {
    this.#check ??= checkBrokers(this.#cluster.admin, this.clientId(`${this.#side}-check`), this.#context(this.#cluster.admin))
    try {
      const brokers = await this.#check
      this.#preferAnswering(brokers)
      return brokers
    } catch (err) {
      this.#check = undefined
      throw err
    }
  }

  /**
   * Clients opened after the check (by any ClusterClients of this process: heartbeats, commands) bootstrap from
   * the brokers that answered it first: the client library takes the first bootstrap server that accepts a
   * connection, and one that accepts and never answers (a wedged broker listed first) would hold every client
   * until its request timeout, again and again.
   */
  #preferAnswering (brokers: readonly BrokerRelease[]): void {
    const answering = brokers.filter(b => b.reachable).map(b => b.address)
    if (answering.length > 0) ANSWERING.set(bootstrapOf(this.#cluster.admin), answering)
  }

  /** ROLE's properties, with the brokers known to answer first in `bootstrap.servers`. */
  #props (props: ClientProps): ClientProps {
    const listed = bootstrapOf(props)
    const answering = ANSWERING.get(listed)
    if (answering === undefined) return props
    return { ...props, 'bootstrap.servers': [...new Set([...answering, ...listed.split(',')])].join(',') }
  }

  /** Closes every client opened so far; gives up waiting after a few seconds (a dead cluster never answers). */
  async close (): Promise<void> {
    const open = this.#open.splice(0)
    await resolveAfter(Promise.allSettled(open.map(c => c.close())), CLOSE_DEADLINE_MS, undefined)
  }

  /** How a client with these role properties names the cluster (label, alias, its security.protocol). */
  #context (props: ClientProps): ClusterContext {
    return clusterContext(this.alias, props)
  }

  #track<T extends { close: () => Promise<void> }> (client: T): T {
    this.#open.push(client)
    return client
  }
}
